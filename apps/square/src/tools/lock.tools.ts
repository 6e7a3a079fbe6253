import { z } from 'zod';
import type { LockService, SignalService } from '@stoa/coordination';
import { integer, type ToolDefinition } from '@stoa/mcp';
import { agentTool, type ToolDeps } from './square-tool';

/** Locks (leases with fencing tokens) and signals, as the reference designed them. */
export function lockTools(deps: ToolDeps, locks: LockService, signals: SignalService): ToolDefinition[] {
  return [
    agentTool(deps, {
      name: 'lock_acquire',
      description:
        'Take a named lock for ttl_seconds (acquire again before it ends to renew). Waits up to wait_seconds for it. Returns a fencing_token that grows with every new holder: pass it along with the work it protects.',
      shape: { name: z.string(), ttl_seconds: z.number(), wait_seconds: z.number().optional() },
      run: (a, agent, ctx) => locks.acquire(agent.id, a, ctx.signal),
    }),
    agentTool(deps, {
      name: 'lock_release',
      description: 'Release a lock you hold (with its fencing_token, when given).',
      shape: { name: z.string(), fencing_token: integer().optional() },
      run: (a, agent) => locks.release(agent.id, a.name, a.fencing_token),
    }),
    agentTool(deps, {
      name: 'lock_list',
      description: 'Held locks with holder, fencing_token and expires_at.',
      readOnly: true,
      shape: { prefix: z.string().default('') },
      run: async (a) => ({ locks: await locks.list(a.prefix) }),
    }),
    agentTool(deps, {
      name: 'signal_send',
      description: 'Send a signal (kind + JSON payload) to one agent, by id or name; it is delivered once.',
      shape: { to: z.string(), kind: z.string(), payload: z.unknown().optional() },
      run: (a, agent) => signals.send(agent.id, a),
    }),
    agentTool(deps, {
      name: 'signal_wait',
      description:
        'Your undelivered signals (of kind), waiting up to timeout seconds for one. Returns {signals, timed_out}.',
      shape: { kind: z.string().optional(), timeout: z.number().default(60) },
      run: (a, agent, ctx) => signals.wait(agent.id, a, ctx.signal),
    }),
  ];
}
