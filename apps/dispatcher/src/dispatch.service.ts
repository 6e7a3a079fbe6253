import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import type { Principal } from '@stoa/core';
import { type LogRelay, UpstreamPool, type Upstream, type UpstreamToolResult } from '@stoa/connectors';
import { isExecuteTool, resultRefs, type ResultRefs } from '@stoa/mcp';
import { SessionIdCodec } from '@stoa/sessions';
import { AffinityStore } from './affinity';
import { Balancer } from './balancer';
import type { DispatcherSettings } from './dispatcher.config';
import { DISPATCHER_SETTINGS } from './dispatcher.tokens';

export type Route =
  | { kind: 'one'; worker: Upstream; args: Record<string, unknown>; warning?: string }
  | { kind: 'fanout' }
  | { kind: 'probe'; key: string }
  | { kind: 'error'; message: string };

export interface CallContext {
  signal?: AbortSignal;
  onProgress?: (p: number, m?: string, t?: number) => void;
  log?: LogRelay;
  /** 2025-era MCP session of the caller at the dispatcher (Mcp-Session-Id). */
  transportSessionId?: string;
  /** `Mcp-Param-Execution-Session-Id` when the client mirrored it. */
  sessionHeader?: string;
}

export const NO_WORKERS = 'No healthy workers available in the dispatcher pool.';

/**
 * Routing for identical workers: a call naming a session goes to the worker that owns it — read from the
 * session id itself (the replica is carried and signed), so any dispatcher replica routes alike — jobs and
 * batches to the worker that created them, list_sessions to all, and new work by the configured strategy.
 */
@Injectable()
export class DispatchService implements OnApplicationShutdown {
  readonly balancer: Balancer;
  readonly store: AffinityStore;
  /** The worker replica a session id names: signature checked when `session_key` is set, else as claimed. */
  private readonly replicaOf: (sid: string) => string | undefined;

  constructor(
    @Inject(DISPATCHER_SETTINGS) private readonly settings: DispatcherSettings,
    private readonly pool: UpstreamPool,
  ) {
    const c = settings.config;
    this.balancer = new Balancer(pool, c);
    this.store = new AffinityStore(c.redis_url, `stoa:dispatcher:${c.name}`);
    const codec = c.session_key ? new SessionIdCodec('dispatcher', c.session_key) : undefined;
    this.replicaOf = codec ? (sid) => codec.replicaOf(sid) : (sid) => SessionIdCodec.claimedReplicaOf(sid);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.store.close();
  }

  /** Where `tool(args)` goes for `principal`. */
  async route(principal: Principal, tool: string, args: Record<string, unknown>, ctx: CallContext): Promise<Route> {
    if (/_list_sessions$/.test(tool)) return { kind: 'fanout' };
    const c = this.settings.config;
    let sid = str(ctx.sessionHeader) ?? str(args.execution_session_id) ?? str(args.session_id);
    const legacyKey = this.legacyKey(tool, ctx);
    if (!sid && legacyKey && c.session_affinity) {
      sid = await this.store.get(legacyKey);
      if (sid) args = { ...args, execution_session_id: sid };
    }
    if (sid) {
      const owner = this.ownerOf(sid);
      if (!owner) return this.fresh(args); // unknown id: any worker answers it exactly like an unknown id
      if (owner.healthy) return { kind: 'one', worker: owner, args };
      if (c.worker_failure_policy === 'error') {
        return {
          kind: 'error',
          message: `Worker '${owner.name}' that holds session ${sid} is unavailable (${owner.status().last_error ?? 'health check failing'}). The session's state lives on that worker: retry later, or start a new session by calling without execution_session_id.`,
        };
      }
      if (legacyKey) await this.store.delete(legacyKey);
      const rest = { ...args };
      delete rest.execution_session_id;
      const next = this.balancer.pick();
      if (!next) return { kind: 'error', message: NO_WORKERS };
      return {
        kind: 'one',
        worker: next,
        args: rest,
        warning: `Session ${sid} was on worker '${owner.name}', which is unavailable; this call ran in a new session on worker '${next.name}'. The previous session's state (variables, imports, files) was lost.`,
      };
    }
    const job = str(args.job_id) ?? str(args.batch_id);
    if (job) {
      const w = this.pool.get((await this.store.get(`job:${job}`)) ?? '');
      return w?.healthy ? { kind: 'one', worker: w, args } : { kind: 'probe', key: job };
    }
    if (c.strategy === 'sticky_session' && c.session_affinity) {
      const w = this.pool.get((await this.store.get(`principal:${principal.id}`)) ?? '');
      if (w?.healthy && !this.balancer.drained.has(w.name)) return { kind: 'one', worker: w, args };
      const picked = this.balancer.pick();
      if (picked) await this.store.set(`principal:${principal.id}`, picked.name);
      return picked ? { kind: 'one', worker: picked, args } : { kind: 'error', message: NO_WORKERS };
    }
    return this.fresh(args);
  }

  /** Learns what a result created (from the ids in its `_meta`): job/batch owners, and a 2025-era caller's kernel session. */
  async remember(worker: Upstream, tool: string, refs: ResultRefs, ctx: CallContext): Promise<void> {
    for (const job of [refs.job_id, refs.batch_id]) if (job) await this.store.set(`job:${job}`, worker.name);
    const legacyKey = this.legacyKey(tool, ctx);
    if (refs.session_id && legacyKey && this.settings.config.session_affinity)
      await this.store.set(legacyKey, refs.session_id);
  }

  /** Where a 2025-era caller's execute session is remembered (its `Mcp-Session-Id` has no kernel of its own here). */
  private legacyKey(tool: string, ctx: CallContext): string | undefined {
    return ctx.transportSessionId && isExecuteTool(tool) ? `mcpexec:${ctx.transportSessionId}:${tool}` : undefined;
  }

  /** Runs a routed call the parsed way (fan-out, probes, reroute notes, 2025-era callers). */
  async call(
    principal: Principal,
    tool: string,
    args: Record<string, unknown>,
    ctx: CallContext,
  ): Promise<UpstreamToolResult> {
    const route = await this.route(principal, tool, args, ctx);
    switch (route.kind) {
      case 'error':
        return toolError(route.message);
      case 'fanout':
        return this.listEverywhere(principal, tool, args, ctx);
      case 'probe':
        return this.probe(principal, tool, args, ctx);
      case 'one': {
        const r = await this.balancer.track(route.worker, () =>
          this.pool.call(route.worker, principal, tool, route.args, {
            signal: ctx.signal,
            onProgress: ctx.onProgress,
            log: ctx.log,
          }),
        );
        await this.remember(route.worker, tool, resultRefs(r), ctx);
        return route.warning ? withWarning(r, route.warning) : r;
      }
    }
  }

  private fresh(args: Record<string, unknown>): Route {
    const w = this.balancer.pick();
    return w ? { kind: 'one', worker: w, args } : { kind: 'error', message: NO_WORKERS };
  }

  /** The worker whose replica a session id names (signature checked when `session_key` is set). */
  ownerOf(sid: string): Upstream | undefined {
    const replica = this.replicaOf(sid);
    return replica ? this.pool.upstreams().find((u) => u.replica === replica) : undefined;
  }

  private async listEverywhere(
    principal: Principal,
    tool: string,
    args: Record<string, unknown>,
    ctx: CallContext,
  ): Promise<UpstreamToolResult> {
    const workers = this.balancer.candidates();
    if (!workers.length) return toolError(NO_WORKERS);
    const parts = await Promise.all(
      workers.map((w) => this.pool.call(w, principal, tool, args, { signal: ctx.signal }).catch(() => undefined)),
    );
    const sessions = parts.flatMap((r) => {
      try {
        return (JSON.parse(textOf(r ?? {})) as { sessions?: unknown[] }).sessions ?? [];
      } catch {
        return [];
      }
    });
    return {
      content: [{ type: 'text', text: JSON.stringify({ success: true, count: sessions.length, sessions }, null, 2) }],
    };
  }

  private async probe(
    principal: Principal,
    tool: string,
    args: Record<string, unknown>,
    ctx: CallContext,
  ): Promise<UpstreamToolResult> {
    let last: UpstreamToolResult | undefined;
    for (const w of this.balancer.candidates()) {
      last = await this.pool.call(w, principal, tool, args, { signal: ctx.signal }).catch(() => undefined);
      if (last && !last.isError) {
        await this.remember(w, tool, resultRefs(last), ctx);
        return last;
      }
    }
    return last ?? toolError(NO_WORKERS);
  }
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v ? v : undefined;
}

export function textOf(r: UpstreamToolResult): string {
  return ((r.content as { type?: string; text?: string }[] | undefined) ?? []).map((c) => c.text ?? '').join('');
}

export function toolError(message: string): UpstreamToolResult {
  return {
    content: [{ type: 'text', text: JSON.stringify({ success: false, error: message }, null, 2) }],
    isError: true,
  };
}

function withWarning(r: UpstreamToolResult, warning: string): UpstreamToolResult {
  try {
    const body = JSON.parse(textOf(r)) as Record<string, unknown>;
    return { ...r, content: [{ type: 'text', text: JSON.stringify({ ...body, rerouted: true, warning }, null, 2) }] };
  } catch {
    return { ...r, content: [...((r.content as unknown[]) ?? []), { type: 'text', text: warning }] };
  }
}
