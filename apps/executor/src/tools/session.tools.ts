import { z } from 'zod';
import type { Principal } from '@stoa/core';
import type { ExecutionService } from '@stoa/execution';
import { defineTool, ToolFailure, type ToolDefinition } from '@stoa/mcp';
import { SessionNotFoundError, type SessionRuntime, type SessionService } from '@stoa/sessions';

const iso = (ms: number): string => new Date(ms).toISOString();
const secs = (ms: number): number => Math.round(ms / 10) / 100;

function summary(rt: SessionRuntime, now: number) {
  return {
    session_id: rt.record.id,
    session_type: 'default',
    status: rt.lock.pending > 0 ? 'busy' : 'idle',
    age_seconds: secs(now - rt.record.createdAt),
    idle_seconds: secs(now - rt.record.lastUsedAt),
  };
}

function info(rt: SessionRuntime, now: number) {
  return {
    ...summary(rt, now),
    created_at: iso(rt.record.createdAt),
    last_accessed: iso(rt.record.lastUsedAt),
    metadata: rt.record.metadata,
    user_identity: rt.record.owner,
    kernel_alive: rt.kernel?.alive ?? false,
    status_history: [{ status: 'created', timestamp: iso(rt.record.createdAt) }],
  };
}

/**
 * The four session housekeeping tools, every one scoped to the caller (the reference checked no owner). An unknown id
 * and another user's id get the same not-found error (flagged isError), as from execute_{name}_code.
 */
export function sessionTools(name: string, sessions: SessionService, execution: ExecutionService): ToolDefinition[] {
  const owned = (principal: Principal, id: string): SessionRuntime => {
    const rt = sessions.find(principal, id);
    if (!rt) throw new SessionNotFoundError(id, sessions.countLive(principal));
    return rt;
  };
  const idArg = z.object({ session_id: z.string().describe('From an execute result or list_sessions') });
  return [
    defineTool({
      name: `${name}_list_sessions`,
      description: `List your active ${name} sessions. summary_only=true (default): id, status, age, idle time; false adds timestamps, metadata and owner.`,
      input: z.object({ summary_only: z.boolean().default(true) }),
      annotations: { readOnlyHint: true },
      handler: ({ summary_only }, ctx) => {
        const now = Date.now();
        const list = sessions.list(ctx.principal).map((rt) => (summary_only ? summary(rt, now) : info(rt, now)));
        return Promise.resolve({ success: true, count: list.length, sessions: list });
      },
    }),
    defineTool({
      name: `${name}_get_session_info`,
      description: `Details of one of your ${name} sessions: timestamps, age, idle time, metadata.`,
      input: idArg,
      annotations: { readOnlyHint: true },
      handler: ({ session_id }, ctx) => {
        try {
          return Promise.resolve({ success: true, session: info(owned(ctx.principal, session_id), Date.now()) });
        } catch (err) {
          if (err instanceof SessionNotFoundError)
            return Promise.resolve(new ToolFailure({ success: false, error: `Session not found: ${err.message}` }));
          throw err;
        }
      },
    }),
    defineTool({
      name: `${name}_close_session`,
      description: `Close one of your ${name} sessions: its kernel stops, its variables and files are discarded.`,
      input: idArg,
      annotations: { destructiveHint: true, idempotentHint: true },
      handler: async ({ session_id }, ctx) => {
        if (!(await sessions.close(ctx.principal, session_id)))
          throw new SessionNotFoundError(session_id, sessions.countLive(ctx.principal));
        return {
          success: true,
          message: `Session ${session_id} closed successfully`,
          remaining_sessions: sessions.countLive(ctx.principal),
        };
      },
    }),
    defineTool({
      name: `${name}_inspect_session`,
      description: `Variables of one of your ${name} sessions: name → type and a short repr (names starting with _ hidden).`,
      input: idArg,
      annotations: { readOnlyHint: true },
      handler: async ({ session_id }, ctx) => {
        const rt = owned(ctx.principal, session_id);
        const { busy, namespace } = await execution.inspect(rt);
        return { success: true, session_id, status: busy ? 'busy' : 'idle', job_id: null, job_status: null, namespace };
      },
    }),
  ];
}
