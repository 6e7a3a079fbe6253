import { Client, type FetchLike, ProtocolError, StreamableHTTPClientTransport, type CallToolResult, type Tool } from '@modelcontextprotocol/client';
import { describeError, ServerUnavailableError } from './multi-server.errors';
import {
  ServerState,
  type CallToolOptions,
  type HeadersSource,
  type ResolvedSessionOptions,
  type ServerStatus,
  type ToolArguments,
} from './multi-server.types';
import { RECONNECT_MAX_MS, type ResolvedServer } from './session-options';

const CLIENT_INFO = { name: 'stoa-multi-server-session', version: '0.1.0' };
/** Bursts of `list_changed` collapse into one `tools/list`. */
const LIST_CHANGED_DEBOUNCE_MS = 100;

/** How a connection tells its session about transitions. Called after the state is updated. */
export interface ConnectionListener {
  up(server: string, tools: readonly Tool[]): void;
  down(server: string, error: string): void;
  toolsChanged(server: string, tools: readonly Tool[]): void;
}

/**
 * One server of a session: connect, list tools, health-check, and reconnect with backoff after a failure.
 * Each connection attempt uses a fresh SDK `Client`; callbacks from a replaced client are ignored.
 * One timer at a time: the health tick while connected, the retry while unavailable.
 */
export class ServerConnection {
  private state: ServerState = ServerState.connecting;
  private client: Client | undefined;
  private tools: Tool[] = [];
  private lastError: string | undefined;
  private connectedAt: Date | undefined;
  private nextRetryAt: Date | undefined;
  private failures = 0;
  private timer: NodeJS.Timeout | undefined;
  private checking: { client: Client; result: Promise<boolean> } | undefined;
  private closed = false;

  constructor(
    private readonly server: ResolvedServer,
    private readonly opts: ResolvedSessionOptions,
    private readonly listener: ConnectionListener,
  ) {}

  get name(): string {
    return this.server.name;
  }

  /** Runs the first connection attempt; resolves when it settled (a failure schedules retries, never rejects). */
  start(): Promise<void> {
    return this.attempt();
  }

  isConnected(): boolean {
    return this.client !== undefined;
  }

  /** The tools the server listed last (kept while it is unavailable, for diagnosis and suggestions). */
  listKnownTools(): readonly Tool[] {
    return this.tools;
  }

  status(): ServerStatus {
    const { state, lastError, connectedAt, nextRetryAt } = this;
    return { state, url: this.server.mcpUrl, lastError, connectedAt, nextRetryAt, era: this.client?.getProtocolEra(), tools: this.tools.map((t) => t.name) };
  }

  /**
   * Calls `tool` on this server. A failure that is not the server answering (refused socket, reset, timeout)
   * triggers an immediate health check; when that fails too, the call rejects with `ServerUnavailableError`.
   */
  async callTool(tool: string, args: ToolArguments, options: CallToolOptions): Promise<CallToolResult> {
    const client = this.client;
    if (!client) throw this.unavailable();
    const { signal, onprogress, timeoutMs } = options;
    try {
      return await client.callTool({ name: tool, arguments: args }, { signal, onprogress, timeout: timeoutMs, resetTimeoutOnProgress: onprogress !== undefined });
    } catch (err) {
      if (err instanceof ProtocolError || signal?.aborted || (await this.checkHealth())) throw err;
      throw this.unavailable(err);
    }
  }

  /** Lists tools again (a call named a tool the cached catalog lacks). Returns false when that failed. */
  async refreshTools(): Promise<boolean> {
    const client = this.client;
    if (!client) return false;
    try {
      const { tools } = await client.listTools(undefined, { timeout: this.opts.connectTimeoutMs, cacheMode: 'refresh' });
      if (client === this.client) this.replaceTools(tools);
      return true;
    } catch {
      return false;
    }
  }

  /** Pings the server now (single flight). False means it was marked unavailable. */
  checkHealth(): Promise<boolean> {
    const client = this.client;
    if (!client) return Promise.resolve(false);
    // Keyed by client: a probe of a replaced client says nothing about the current one.
    if (this.checking?.client !== client) {
      const check = { client, result: this.probe(client) };
      this.checking = check;
      void check.result.finally(() => {
        if (this.checking === check) this.checking = undefined;
      });
    }
    return this.checking.result;
  }

  /** Stops timers and closes the client. The connection cannot be restarted. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    const client = this.client;
    this.client = undefined;
    // A server that is already gone cannot fail our goodbye.
    await client?.close().catch(() => undefined);
  }

  private async attempt(): Promise<void> {
    this.timer = undefined;
    const client = this.newClient();
    let tools: Tool[];
    try {
      const timeout = this.opts.connectTimeoutMs;
      await client.connect(new StreamableHTTPClientTransport(new URL(this.server.mcpUrl), { fetch: fetchWithHeaders(this.server.headers) }), { timeout });
      tools = (await client.listTools(undefined, { timeout })).tools;
    } catch (err) {
      await client.close().catch(() => undefined);
      if (!this.closed) this.fail(err);
      return;
    }
    if (this.closed) return client.close();
    this.connected(client, tools);
  }

  private newClient(): Client {
    const client: Client = new Client(CLIENT_INFO, {
      versionNegotiation: { mode: this.opts.era },
      // Covers both eras when the server advertises tools.listChanged (2026-07-28 rides subscriptions/listen).
      listChanged: { tools: { debounceMs: LIST_CHANGED_DEBOUNCE_MS, onChanged: (error, tools) => this.listChanged(client, error, tools) } },
    });
    // A dropped stream or failed send is a hint, not proof: confirm with a ping before declaring the server down.
    client.onerror = () => {
      if (client === this.client) void this.checkHealth();
    };
    client.onclose = () => this.lost(client, new Error('the connection closed'));
    return client;
  }

  private connected(client: Client, tools: Tool[]): void {
    const changed = this.state !== ServerState.connecting && !sameTools(this.tools, tools);
    this.client = client;
    this.state = ServerState.connected;
    this.connectedAt = new Date();
    this.nextRetryAt = undefined;
    this.failures = 0;
    this.tools = tools;
    this.scheduleHealthCheck();
    this.listener.up(this.name, tools);
    if (changed) this.listener.toolsChanged(this.name, tools);
  }

  private fail(err: unknown): void {
    const wasAvailable = this.state !== ServerState.unavailable;
    this.state = ServerState.unavailable;
    this.lastError = describeError(err);
    this.connectedAt = undefined;
    this.scheduleReconnect();
    if (wasAvailable) this.listener.down(this.name, this.lastError);
  }

  /** The current client failed: drop it and start reconnecting. Ignores clients already replaced. */
  private lost(client: Client, err: unknown): void {
    if (client !== this.client || this.closed) return;
    this.client = undefined;
    clearTimeout(this.timer);
    void client.close().catch(() => undefined);
    this.fail(err);
  }

  private async probe(client: Client): Promise<boolean> {
    const timeout = this.opts.connectTimeoutMs;
    try {
      // 2026-07-28 has no ping; server/discover is its cheapest round trip.
      await (client.getProtocolEra() === 'modern' ? client.discover({ timeout }) : client.ping({ timeout }));
      return true;
    } catch (err) {
      // A JSON-RPC error is still an answer: the server is alive.
      if (err instanceof ProtocolError) return true;
      this.lost(client, err);
      return false;
    }
  }

  private scheduleHealthCheck(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.healthTick(), this.opts.healthIntervalMs);
  }

  private async healthTick(): Promise<void> {
    const client = this.client;
    // Reschedule only for the client checked: a reconnect in between has scheduled its own tick.
    if ((await this.checkHealth()) && client === this.client && !this.closed) this.scheduleHealthCheck();
  }

  private scheduleReconnect(): void {
    // Exponential backoff with ±20 % jitter so many clients do not retry in lockstep.
    const jitter = 0.8 + Math.random() * 0.4;
    const delay = Math.round(Math.min(RECONNECT_MAX_MS, this.opts.reconnectBaseMs * 2 ** this.failures * jitter));
    this.failures++;
    this.nextRetryAt = new Date(Date.now() + delay);
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.attempt(), delay);
  }

  private listChanged(client: Client, error: Error | null, tools: Tool[] | null): void {
    if (client !== this.client) return;
    if (error) void this.checkHealth();
    else if (tools) this.replaceTools(tools);
  }

  private replaceTools(tools: Tool[]): void {
    if (sameTools(this.tools, tools)) return;
    this.tools = tools;
    this.listener.toolsChanged(this.name, tools);
  }

  private unavailable(cause?: unknown): ServerUnavailableError {
    return new ServerUnavailableError(this.name, this.server.mcpUrl, this.lastError, this.nextRetryAt, { cause });
  }
}

function sameTools(a: readonly Tool[], b: readonly Tool[]): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** A fetch that adds the spec's headers (resolved per request, so rotating tokens work). */
function fetchWithHeaders(source: HeadersSource | undefined): FetchLike | undefined {
  if (!source) return undefined;
  return async (url, init) => {
    const extra = typeof source === 'function' ? await source() : source;
    const headers = new Headers(init?.headers);
    for (const [key, value] of Object.entries(extra)) if (!headers.has(key)) headers.set(key, value);
    return fetch(url, { ...init, headers });
  };
}
