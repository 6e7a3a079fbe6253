import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { Logger } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { type ActivityPublisher, failSpan, inSpan, SpanKind, type StoaMetrics, traceCarrier } from '@stoa/activity';
import { type Principal, UnavailableError } from '@stoa/core';
import { type LogLevel, resultRefs } from '@stoa/mcp';
import type { McpToolInfo } from './catalog';
import type { CredentialSource } from './upstream.config';
import { LegacyClients } from './legacy-clients';
import { withTraceMeta } from './observed-call';
import type { LogRelay } from './proxy-tool';
import { type Hop, publishToolCall, stringOf } from './tool-called';
import { Upstream, type UpstreamStatus } from './upstream';
import type { ForwardResult, RpcMessage } from './upstream-http';
import type { PoolConfig, UpstreamConfig } from './upstream.config';

/** The 2026-07-28 request `_meta` key asking a server for log messages from a level up. */
const LOG_LEVEL_META = 'io.modelcontextprotocol/logLevel';

/** What a caller holds per upstream: the credential the upstream gets, reused until it nears expiry. */
interface CallerClient {
  authorization: string | undefined;
  expiresAt: number;
}

/** A tool call's result as the upstream returned it (content, isError, structuredContent…). */
export type UpstreamToolResult = Record<string, unknown>;

/**
 * The upstreams of a connector (router, gateway, dispatcher). Connects to all of them concurrently with
 * per-upstream failure isolation, routes tool names to the healthy upstream that lists them, and keeps one
 * client per caller principal and upstream (bounded LRU, idle-evicted) so callers never share an upstream
 * identity or session. Calls go over keep-alive HTTP without a handshake per call.
 */
export class UpstreamPool extends EventEmitter<{ changed: [] }> {
  private readonly logger = new Logger(UpstreamPool.name);
  private readonly list: Upstream[];
  private routes = new Map<string, { upstream: Upstream; tool: McpToolInfo }>();
  private readonly callers: LRUCache<string, CallerClient>;
  private readonly legacy: LegacyClients;
  /** Where tool calls and upstream hops are counted (set by the connector module). */
  metrics?: StoaMetrics;
  /** Where each proxied call is published as a `tool_called` activity event (set by the connector module). */
  activity?: ActivityPublisher;

  constructor(
    configs: readonly UpstreamConfig[],
    private readonly config: PoolConfig,
    credentials: (upstream: UpstreamConfig) => CredentialSource,
  ) {
    super();
    this.legacy = new LegacyClients(
      config.max_principals * Math.max(1, configs.length),
      config.principal_idle_minutes * 60_000,
    );
    this.list = configs.map((c) => new Upstream(c, config, credentials(c), this.legacy));
    for (const u of this.list) u.on('changed', () => this.reindex());
    this.callers = new LRUCache<string, CallerClient>({
      max: config.max_principals * Math.max(1, configs.length),
      ttl: config.principal_idle_minutes * 60_000,
      updateAgeOnGet: true,
    });
  }

  /** Connects to every upstream at once; resolves when each first attempt settled (failures are isolated). */
  async start(): Promise<void> {
    await Promise.all(this.list.map((u) => u.start()));
    this.reindex();
  }

  upstreams(): readonly Upstream[] {
    return this.list;
  }

  get(name: string): Upstream | undefined {
    return this.list.find((u) => u.name === name);
  }

  /** The healthy upstream that offers MCP tool `name`. */
  route(name: string): { upstream: Upstream; tool: McpToolInfo } | undefined {
    return this.routes.get(name);
  }

  /** Every proxied MCP tool, in upstream order. */
  tools(): { upstream: Upstream; tool: McpToolInfo }[] {
    return [...this.routes.values()];
  }

  status(): UpstreamStatus[] {
    return this.list.map((u) => u.status());
  }

  /** Number of caller clients currently held (for admin and tests). */
  get callerClients(): number {
    return this.callers.size + this.legacy.size;
  }

  /** The Authorization value `upstream` gets for `principal` (cached per caller until near expiry). */
  async authorization(upstream: Upstream, principal: Principal): Promise<string | undefined> {
    const key = `${upstream.name}\u0000${principal.id}\u0000${principal.token ? createHash('sha256').update(principal.token).digest('base64url') : ''}`;
    const hit = this.callers.get(key);
    if (hit && hit.expiresAt > Date.now()) return hit.authorization;
    const authorization = await upstream.credentials.authorization(principal);
    this.callers.set(key, { authorization, expiresAt: expiryOf(authorization) });
    return authorization;
  }

  /**
   * Streams a caller's 2026-07-28 request to the upstream and the answer back (the fast path). `sessionId` is
   * the execution session the call names (published when the result names none).
   */
  async forward(
    upstream: Upstream,
    principal: Principal,
    body: Buffer | string,
    headers: IncomingHttpHeaders,
    res: ServerResponse,
    signal: AbortSignal,
    opts: { headers?: Record<string, string>; sessionId?: string } = {},
  ): Promise<ForwardResult> {
    const hop = { upstream, principal, tool: stringOf(headers['mcp-name']) ?? '' };
    return this.timed(
      hop,
      async (trace) => {
        const authorization = await this.authorization(upstream, principal);
        const sent = trace.traceparent ? withTraceMeta(body, trace) : body;
        return upstream.http.forward(sent, headers, authorization, res, signal, { ...opts.headers, ...trace });
      },
      (r) => r?.refs.session_id ?? opts.sessionId,
    );
  }

  /**
   * Calls an upstream tool for `principal` and returns its result; progress notifications go to `onProgress`, log
   * messages (2026-07-28 upstreams, asked from `log.level`) to `log`.
   */
  async call(
    upstream: Upstream,
    principal: Principal,
    name: string,
    args: Record<string, unknown>,
    opts: {
      signal?: AbortSignal;
      onProgress?: (progress: number, message?: string, total?: number) => void;
      log?: LogRelay;
      headers?: Record<string, string>;
    } = {},
  ): Promise<UpstreamToolResult> {
    return this.timed(
      { upstream, principal, tool: name },
      (trace) =>
        this.callOnce(upstream, principal, name, args, { ...opts, headers: { ...opts.headers, ...trace } }, trace),
      (r) => (r && resultRefs(r).session_id) ?? stringOf(args.execution_session_id),
    );
  }

  private async callOnce(
    upstream: Upstream,
    principal: Principal,
    name: string,
    args: Record<string, unknown>,
    opts: Parameters<UpstreamPool['call']>[4] = {},
    trace: Record<string, string> = {},
  ): Promise<UpstreamToolResult> {
    if (!upstream.healthy)
      throw new UnavailableError(
        `Upstream '${upstream.name}' is unavailable (${upstream.status().last_error ?? 'not connected yet'}). Retry later; the router reconnects on its own.`,
      );
    const authorization = await this.authorization(upstream, principal);
    if (upstream.era === 'legacy') return this.callLegacy(upstream, principal, authorization, name, args, opts);
    const params: Record<string, unknown> = { name, arguments: args };
    // 2026-07-28: the trace context also travels in `_meta` (MCP semantic conventions), beside the HTTP header.
    const meta = {
      ...(opts.onProgress ? { progressToken: 1 } : {}),
      ...(opts.log ? { [LOG_LEVEL_META]: opts.log.level } : {}),
      ...trace,
    };
    if (Object.keys(meta).length) params._meta = meta;
    const signal = opts.signal
      ? AbortSignal.any([opts.signal, AbortSignal.timeout(this.config.call_timeout_seconds * 1000)])
      : AbortSignal.timeout(this.config.call_timeout_seconds * 1000);
    let r: RpcMessage;
    try {
      r = await upstream.http.rpc('tools/call', params, {
        authorization,
        signal,
        name,
        headers: {
          ...paramHeaders(
            upstream.catalog?.mcpTools.find((t) => t.name === name),
            args,
          ),
          ...opts.headers,
        },
        onNotification: (m) => {
          if (m.method === 'notifications/progress' && opts.onProgress) {
            const p = m.params as { progress: number; message?: string; total?: number };
            opts.onProgress(p.progress, p.message, p.total);
          }
          if (m.method === 'notifications/message' && opts.log) {
            const p = m.params as { level: LogLevel; data: unknown; logger?: string };
            opts.log.send(p.level, p.data, p.logger);
          }
        },
      });
    } catch (err) {
      throw upstream.unreachable(err);
    }
    if (r.error) throw new UnavailableError(`Upstream error from '${upstream.name}': ${r.error.message}`);
    return r.result ?? {};
  }

  /**
   * Runs one request to `upstream` in a client span (its trace context handed to `run` for the request's headers
   * and `_meta`), counts its duration and publishes it; an error result or a throw is outcome `error`.
   */
  private timed<T extends { isError?: unknown }>(
    hop: Hop,
    run: (trace: Record<string, string>) => Promise<T>,
    sessionOf: (r: T | undefined) => string | undefined,
  ): Promise<T> {
    const { upstream, tool } = hop;
    const attributes = { 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': tool, 'stoa.upstream': upstream.name };
    return inSpan(`tools/call ${tool}`, { kind: SpanKind.CLIENT, attributes }, async (span) => {
      const started = performance.now();
      const seconds = () => (performance.now() - started) / 1000;
      try {
        const r = await run(traceCarrier());
        if (r.isError === true) failSpan(span, 'tool_error');
        this.metrics?.observeUpstreamHop(upstream.name, r.isError === true ? 'error' : 'ok', seconds());
        publishToolCall(this.activity, hop, r.isError !== true, seconds(), () => sessionOf(r));
        return r;
      } catch (err) {
        this.metrics?.observeUpstreamHop(upstream.name, 'error', seconds());
        publishToolCall(this.activity, hop, false, seconds(), () => sessionOf(undefined), (err as Error).message);
        throw err;
      }
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.list.map((u) => u.close()));
    this.callers.clear();
    this.legacy.clear();
  }

  /** A 2025-era upstream: the caller's own MCP session there (one client per caller and upstream). */
  private async callLegacy(
    upstream: Upstream,
    principal: Principal,
    authorization: string | undefined,
    name: string,
    args: Record<string, unknown>,
    opts: { signal?: AbortSignal; onProgress?: (progress: number, message?: string, total?: number) => void },
  ): Promise<UpstreamToolResult> {
    const key = upstream.legacyKey(principal, authorization);
    try {
      const client = await this.legacy.get(key, upstream.http.urls.mcp, authorization);
      return await client.callTool(
        { name, arguments: args },
        {
          signal: opts.signal,
          timeout: this.config.call_timeout_seconds * 1000,
          onprogress: opts.onProgress ? (p) => opts.onProgress?.(p.progress, p.message, p.total) : undefined,
        },
      );
    } catch (err) {
      this.legacy.drop(key); // the upstream session may be gone: the next call starts a new one
      throw new UnavailableError(
        `Upstream '${upstream.name}' (2025-era MCP) failed: ${(err as Error).message}. Retry; a new upstream session is opened on the next call.`,
      );
    }
  }

  private reindex(): void {
    const routes = new Map<string, { upstream: Upstream; tool: McpToolInfo }>();
    for (const upstream of this.list) {
      for (const tool of upstream.catalog?.mcpTools ?? []) {
        const taken = routes.get(tool.name);
        if (taken) {
          this.logger.warn(
            { tool: tool.name, kept: taken.upstream.name, dropped: upstream.name },
            'two upstreams offer the same tool name; the first one wins',
          );
          continue;
        }
        routes.set(tool.name, { upstream, tool });
      }
    }
    this.routes = routes;
    this.emit('changed');
  }
}

/** When a bearer value should be re-derived: its JWT `exp` minus a minute, at most 5 minutes ahead. */
function expiryOf(authorization: string | undefined): number {
  const cap = Date.now() + 5 * 60_000;
  const token = authorization?.replace(/^Bearer\s+/i, '');
  const payload = token?.split('.')[1];
  if (!payload) return cap;
  try {
    const exp = (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { exp?: number }).exp;
    return typeof exp === 'number' ? Math.min(cap, exp * 1000 - 60_000) : cap;
  } catch {
    return cap;
  }
}

/**
 * 2026-07-28 clients MUST mirror arguments whose schema property declares `x-mcp-header` as `Mcp-Param-{Name}`
 * headers (servers reject a body/header mismatch). Non-ASCII values use the Base64 sentinel form.
 */
export function paramHeaders(tool: McpToolInfo | undefined, args: Record<string, unknown>): Record<string, string> {
  const props = (tool?.inputSchema.properties ?? {}) as Record<string, { 'x-mcp-header'?: unknown }>;
  const out: Record<string, string> = {};
  for (const [key, prop] of Object.entries(props)) {
    const header = prop['x-mcp-header'];
    const value = args[key];
    if (
      typeof header !== 'string' ||
      !(typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
    )
      continue;
    out[`mcp-param-${header.toLowerCase()}`] = headerValue(String(value));
  }
  return out;
}

/** A value as an `Mcp-Name` / `Mcp-Param-*` header: as is when plain ASCII, else in the Base64 sentinel form. */
export function headerValue(text: string): string {
  return /^[\x20-\x7e]*$/.test(text) && text.trim() === text
    ? text
    : `=?base64?${Buffer.from(text).toString('base64')}?=`;
}
