import { z } from 'zod';
import { AuditOutcome, type AuditService } from '@stoa/audit';
import type { AgentRef, RegistryService } from '@stoa/coordination';
import { isAppError } from '@stoa/core';
import { defineTool, ToolFailure, type ToolContext, type ToolDefinition } from '@stoa/mcp';

/** What every square tool binding needs. */
export interface ToolDeps {
  square: string;
  registry: RegistryService;
  audit: AuditService;
}

const agentIdArg = z
  .string()
  .optional()
  .describe('Your agent UUID obtained from register(). Include in every call except register.');

interface SquareToolDef<S extends z.ZodRawShape> {
  name: string;
  description: string;
  shape: S;
  readOnly?: boolean;
  /** The calling agent is resolved first (the caller's own agents only) unless this is register. */
  run: (args: z.output<z.ZodObject<S>>, agent: AgentRef, ctx: ToolContext) => Promise<unknown>;
}

/** A tool called as one of the caller's agents: resolved, heartbeat, audited, errors in the reference's shape. */
export function agentTool<S extends z.ZodRawShape>(deps: ToolDeps, def: SquareToolDef<S>): ToolDefinition {
  return audited(
    deps,
    def.name,
    def.description,
    z.object({ ...def.shape, _agent_id: agentIdArg }),
    def.readOnly,
    async (args, ctx) => {
      const agent = await deps.registry.resolve(
        {
          principal: ctx.principal,
          transportSessionId: ctx.transportSessionId,
          agentId: args._agent_id as string | undefined,
        },
        def.name,
      );
      await deps.registry.begin(agent.id);
      try {
        return { agentId: agent.id, value: await def.run(args as never, agent, ctx) };
      } finally {
        deps.registry.end(agent.id);
      }
    },
  );
}

/** A tool that needs no agent yet (register). */
export function openTool<S extends z.ZodRawShape>(
  deps: ToolDeps,
  def: Omit<SquareToolDef<S>, 'run'> & {
    run: (args: z.output<z.ZodObject<S>>, ctx: ToolContext) => Promise<{ agentId: string; value: unknown }>;
  },
): ToolDefinition {
  return audited(deps, def.name, def.description, z.object(def.shape), def.readOnly, (args, ctx) =>
    def.run(args as never, ctx),
  );
}

function audited(
  deps: ToolDeps,
  name: string,
  description: string,
  input: z.ZodObject,
  readOnly: boolean | undefined,
  call: (args: Record<string, unknown>, ctx: ToolContext) => Promise<{ agentId: string; value: unknown }>,
): ToolDefinition {
  return defineTool({
    name,
    description,
    input,
    annotations: readOnly ? { readOnlyHint: true } : undefined,
    handler: async (args: Record<string, unknown>, ctx) => {
      const started = performance.now();
      let agentId: string | null = null;
      const record = (outcome: AuditOutcome) =>
        deps.audit.record({
          principal: ctx.principal.id,
          tool: name,
          upstream: deps.square,
          sessionId: agentId,
          outcome,
          decision: outcome === AuditOutcome.denied ? 'not one of the caller’s agents' : 'allowed',
          durationMs: performance.now() - started,
          bytesIn: JSON.stringify(args).length,
          bytesOut: 0,
        });
      try {
        const r = await call(args, ctx);
        agentId = r.agentId;
        record(AuditOutcome.ok);
        return r.value;
      } catch (err) {
        const denied = isAppError(err) && err.code === 'NOT_AUTHORIZED';
        record(denied ? AuditOutcome.denied : AuditOutcome.toolError);
        return referenceError(err);
      }
    },
  });
}

/** The reference's error answer `{"error": CODE, "message", "details", "fix"}` (flagged isError). */
function referenceError(err: unknown): ToolFailure {
  if (!isAppError(err)) throw err; // an unexpected failure: the MCP layer logs it and answers an internal error
  const { fix, ...details } = err.details as { fix?: string } & Record<string, unknown>;
  return new ToolFailure({
    error: err.code,
    message: err.message,
    details,
    fix: fix ?? 'Check the arguments and retry.',
  });
}
