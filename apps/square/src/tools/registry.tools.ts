import { z } from 'zod';
import { AgentStatus, publicView, type RegistryService } from '@stoa/coordination';
import type { ToolDefinition } from '@stoa/mcp';
import { agentTool, openTool, type ToolDeps } from './square-tool';

const STATUSES = Object.values(AgentStatus) as [AgentStatus, ...AgentStatus[]];

/** The reference's backbone tools: register, list_agents, get_agent, get_agent_by_name. */
export function registryTools(deps: ToolDeps, registry: RegistryService): ToolDefinition[] {
  return [
    openTool(deps, {
      name: 'register',
      description:
        'Join the square as a named agent (or update your agent of that name: same id). Returns your agent_id; pass it as _agent_id in later calls when you run several agents.',
      shape: {
        name: z.string().describe('Unique agent name in this square'),
        role: z.string().optional().describe('e.g. planner, reviewer'),
        capabilities: z.array(z.string()).optional().describe('What you can do, e.g. ["python", "review"]'),
        manifest: z.record(z.string(), z.unknown()).optional().describe('Free-form JSON about you'),
      },
      run: async (a, ctx) => {
        const agent = await registry.register(
          { principal: ctx.principal, transportSessionId: ctx.transportSessionId },
          { name: a.name, role: a.role, capabilities: a.capabilities, manifest: a.manifest },
        );
        return {
          agentId: agent.id,
          value: { agent_id: agent.id, name: agent.name, status: agent.status, registered_at: agent.registered_at },
        };
      },
    }),
    agentTool(deps, {
      name: 'list_agents',
      description: 'Agents in the square in registration order, filtered by role, capability, status or name prefix.',
      readOnly: true,
      shape: {
        role: z.string().optional(),
        capability: z.string().optional(),
        status: z.enum(STATUSES).optional().describe('online | busy (holding a lock) | offline'),
        name_prefix: z.string().optional(),
      },
      run: async (a) => ({ agents: await registry.list(a) }),
    }),
    agentTool(deps, {
      name: 'get_agent',
      description: 'One agent by id; {"agent": null} when there is none.',
      readOnly: true,
      shape: { agent_id: z.string() },
      run: async (a) => {
        const agent = await registry.find(a.agent_id);
        return { agent: agent ? publicView(agent) : null };
      },
    }),
    agentTool(deps, {
      name: 'get_agent_by_name',
      description: 'One agent by name; {"agent": null} when there is none.',
      readOnly: true,
      shape: { name: z.string() },
      run: async (a) => {
        const agent = await registry.findByName(a.name);
        return { agent: agent ? publicView(agent) : null };
      },
    }),
  ];
}
