import { EventEmitter } from 'node:events';
import { Logger } from '@nestjs/common';
import { ConnectionState, ConnectionSupervisor, describeError } from '@stoa/client';
import { type Principal, UnavailableError } from '@stoa/core';
import { parseCatalog, type McpToolInfo, type UpstreamCatalog } from './catalog';
import type { CredentialSource } from './upstream.config';
import type { LegacyClients } from './legacy-clients';
import { UpstreamHttp, UpstreamHttpError } from './upstream-http';
import type { PoolConfig, UpstreamConfig } from './upstream.config';

export type UpstreamState = 'connecting' | 'healthy' | 'unavailable';
/** Which MCP era the pool speaks to an upstream: 2026-07-28 requests (forwardable) or 2025 sessions. */
export type UpstreamEra = 'modern' | 'legacy';

/** Admin / health view of one upstream. */
export interface UpstreamStatus {
  name: string;
  url: string;
  state: UpstreamState;
  server_name: string | null;
  tools: number;
  last_error: string | null;
  latency_ms: number | null;
  connected_at: string | null;
  checked_at: string | null;
  catalog_version: string | null;
  era: UpstreamEra;
  replica: string | null;
}

/** The principal the pool uses for its own control-plane calls (tools/list on upstreams without mcp_tools). */
const SERVICE: Principal = { id: 'stoa-connector@service', roles: [], scopes: [], source: 'noop' };
/** First reconnect delay after a failed round (then doubling, with jitter, up to 30 s). */
const RECONNECT_BASE_MS = 1000;

/**
 * One upstream server: keep-alive HTTP, its catalog (GET /catalog, tools/list as fallback), and a catalog
 * refresh on a timer or when the upstream reports a new catalog version. Health checks and reconnects with
 * backoff and jitter are the `ConnectionSupervisor`'s (@stoa/client), as for the client's sessions: one
 * health round (/health, then the catalog when stale) is both its connect and its check. An unavailable
 * upstream has no catalog: its tools disappear until it is back.
 */
export class Upstream extends EventEmitter<{ changed: [] }> {
  private readonly logger: Logger;
  readonly http: UpstreamHttp;
  private readonly supervisor: ConnectionSupervisor;
  private detectedEra: UpstreamEra = 'modern';
  private declared: Readonly<Record<string, unknown>> = {};
  private replicaName: string | null = null;
  private current?: UpstreamCatalog;
  private latencyMs: number | null = null;
  private checkedAt: number | null = null;
  private lastRefresh = 0;

  constructor(
    readonly config: UpstreamConfig,
    private readonly pool: PoolConfig,
    readonly credentials: CredentialSource,
    /** Per-caller clients for 2025-era upstreams (shared with the pool). */
    readonly legacy: LegacyClients,
  ) {
    super();
    this.logger = new Logger(`Upstream:${config.name}`);
    this.http = new UpstreamHttp(config.url, pool.connections_per_upstream);
    const round = (signal: AbortSignal) => this.round(signal);
    this.supervisor = new ConnectionSupervisor(
      { connect: round, check: round },
      { healthIntervalMs: pool.health_interval_seconds * 1000, reconnectBaseMs: RECONNECT_BASE_MS, unrefTimers: true },
    );
    this.supervisor.on('changed', (state) => this.changed(state));
  }

  get name(): string {
    return this.config.name;
  }

  /** The catalog while healthy, else undefined. */
  get catalog(): UpstreamCatalog | undefined {
    return this.healthy ? this.current : undefined;
  }

  /** The replica name the upstream reports on /health (executors carry it, signed, in their session ids). */
  get replica(): string | null {
    return this.replicaName;
  }

  /** `legacy` for upstreams that only answer 2025-era sessions (found at connect). */
  get era(): UpstreamEra {
    return this.detectedEra;
  }

  /** The extensions the upstream declared in its last `server/discover` answer (none when it could not be asked). */
  get extensions(): Readonly<Record<string, unknown>> {
    return (this.declared.extensions as Record<string, unknown> | undefined) ?? {};
  }

  /** Whether its last `server/discover` (2025-era: initialize) declared `capability` (`prompts`, `completions`). */
  declares(capability: string): boolean {
    return this.declared[capability] !== undefined;
  }

  get healthy(): boolean {
    return this.supervisor.state === ConnectionState.connected;
  }

  status(): UpstreamStatus {
    const { lastError, connectedAt } = this.supervisor;
    return {
      name: this.name,
      url: this.http.urls.mcp,
      state: this.state,
      server_name: this.current?.serverName ?? null,
      tools: this.healthy ? (this.current?.mcpTools.length ?? 0) : 0,
      last_error: this.healthy || lastError === undefined ? null : describeError(lastError),
      latency_ms: this.latencyMs,
      connected_at: connectedAt?.toISOString() ?? null,
      checked_at: this.checkedAt ? new Date(this.checkedAt).toISOString() : null,
      catalog_version: this.current?.version ?? null,
      era: this.detectedEra,
      replica: this.replicaName,
    };
  }

  /** Connects (once, now) and keeps checking afterwards. Resolves when the first attempt settled. */
  start(): Promise<void> {
    return this.supervisor.start();
  }

  /** Forces a reconnect now (admin). */
  async reconnect(): Promise<UpstreamStatus> {
    this.current = undefined;
    await this.supervisor.reconnect();
    return this.status();
  }

  /** The key of `principal`'s 2025-era client session here: one per caller, upstream and credential. */
  legacyKey(principal: Principal, authorization: string | undefined): string {
    return `${this.name}\u0000${principal.id}\u0000${authorization ?? ''}`;
  }

  /** The error for a request that did not reach this upstream. */
  unreachable(err: unknown): UnavailableError {
    return new UnavailableError(
      `Cannot reach upstream '${this.name}': ${(err as Error).message}. Retry; if it persists, check the upstream's health on /health.`,
    );
  }

  async close(): Promise<void> {
    await this.supervisor.close();
    await this.http.close();
  }

  /** The pool's names for the supervisor's states (`healthy` is the admin API's word for connected). */
  private get state(): UpstreamState {
    const state = this.supervisor.state;
    return state === ConnectionState.connected ? 'healthy' : state;
  }

  /** One health round: /health, then the catalog when stale. Rejects when the upstream is not usable. */
  private async round(signal: AbortSignal): Promise<void> {
    const timeoutMs = this.pool.connect_timeout_seconds * 1000;
    const started = performance.now();
    const health = await this.http.getJson('/health', timeoutMs);
    this.latencyMs = Math.round((performance.now() - started) * 10) / 10;
    this.checkedAt = Date.now();
    // Plain MCP servers may have no /health: any answer short of a server error means it is up.
    if (health.status >= 500) throw new UpstreamHttpError(health.status, 'health check failed');
    const reported = (health.body as { catalog_version?: string } | undefined)?.catalog_version;
    this.replicaName = (health.body as { replica?: string } | undefined)?.replica ?? this.replicaName;
    const refreshDue = Date.now() - this.lastRefresh > this.pool.catalog_refresh_seconds * 1000;
    const stale = !this.current || !this.healthy || refreshDue || (reported && reported !== this.current.version);
    if (stale) await this.refresh(timeoutMs, signal);
  }

  private changed(state: ConnectionState): void {
    if (state === ConnectionState.connected)
      this.logger.log({ server: this.current?.serverName, tools: this.current?.mcpTools.length }, 'upstream connected');
    if (state === ConnectionState.unavailable)
      this.logger.warn({ err: describeError(this.supervisor.lastError) }, 'upstream unavailable');
    this.emit('changed');
  }

  private async refresh(timeoutMs: number, signal: AbortSignal): Promise<void> {
    const doc = await this.http.getJson('/catalog', timeoutMs);
    // Plain MCP servers have no /catalog: their tools come from tools/list, with no domain catalog.
    if (doc.status >= 300 && doc.status !== 404) throw new UpstreamHttpError(doc.status, 'GET /catalog failed');
    const parsed = parseCatalog(doc.status === 404 ? {} : doc.body, this.name, {
      expose: this.config.expose_tools,
      aliases: this.config.tool_aliases,
    });
    if (!parsed.mcpTools) this.detectedEra = await this.probeEra(signal);
    // An executor's catalog says nothing of its extensions: ask, but an unanswered discover never fails the round.
    else if (this.detectedEra === 'modern') await this.probeEra(signal).catch(() => undefined);
    const mcpTools = parsed.mcpTools ?? (await this.listTools(signal));
    const changed = parsed.version !== this.current?.version;
    this.current = { ...parsed, mcpTools };
    this.lastRefresh = Date.now();
    if (changed) this.emit('changed');
  }

  /** Bounded by the connect timeout, and aborted when the upstream is closed. */
  private bound(signal: AbortSignal): AbortSignal {
    return AbortSignal.any([signal, AbortSignal.timeout(this.pool.connect_timeout_seconds * 1000)]);
  }

  /**
   * 2026-07-28 `server/discover` answered → modern (and its declared extensions are kept); a 400/404/405 for a
   * session-less request → a 2025-era server. Needs control-plane credentials (none or client_credentials);
   * otherwise modern is assumed.
   */
  private async probeEra(signal: AbortSignal): Promise<UpstreamEra> {
    const authorization = await this.credentials.authorization(SERVICE).catch(() => undefined);
    try {
      const r = await this.http.rpc('server/discover', {}, { authorization, signal: this.bound(signal) });
      this.declared = (r.result?.capabilities as Record<string, unknown> | undefined) ?? {};
      return r.result ? 'modern' : 'legacy';
    } catch (err) {
      if (err instanceof UpstreamHttpError && [400, 404, 405].includes(err.status)) return 'legacy';
      throw err;
    }
  }

  /**
   * tools/list for upstreams whose /catalog lacks `mcp_tools`. Modes that forward a caller's token have none for
   * the connector itself: the list is then asked for without one (an upstream that needs auth answers 401).
   */
  private async listTools(signal: AbortSignal): Promise<McpToolInfo[]> {
    const authorization = await this.credentials.authorization(SERVICE).catch(() => undefined);
    if (this.detectedEra === 'legacy') {
      const client = await this.legacy.get(`${this.name}\u0000control`, this.http.urls.mcp, authorization);
      this.declared = (client.getServerCapabilities() as Record<string, unknown> | undefined) ?? {};
      return (await client.listTools()).tools;
    }
    const r = await this.http.rpc('tools/list', {}, { authorization, signal: this.bound(signal) });
    if (r.error) throw new Error(`tools/list failed: ${r.error.message}`);
    return ((r.result?.tools as McpToolInfo[] | undefined) ?? []).filter((t) => typeof t?.name === 'string');
  }
}
