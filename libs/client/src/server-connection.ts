import {
  Client,
  type FetchLike,
  ProtocolError,
  StreamableHTTPClientTransport,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/client';
import { ConnectionState, ConnectionSupervisor } from './connection-supervisor';
import { describeError, ServerUnavailableError } from './multi-server.errors';
import type {
  CallToolOptions,
  HeadersSource,
  ResolvedSessionOptions,
  ServerStatus,
  ToolArguments,
} from './multi-server.types';
import type { ResolvedServer } from './session-options';

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
 * One server of a session: an SDK `Client` per connection attempt (connect, then list tools), pinged as the
 * supervisor's health check. States, health ticks and reconnect backoff are the `ConnectionSupervisor`'s;
 * callbacks from a replaced client are ignored.
 */
export class ServerConnection {
  private readonly supervisor: ConnectionSupervisor;
  private client: Client | undefined;
  private tools: Tool[] = [];
  /** Set by a reconnect that listed different tools; announced once the connection is up. */
  private toolsDiffer = false;

  constructor(
    private readonly server: ResolvedServer,
    private readonly opts: ResolvedSessionOptions,
    private readonly listener: ConnectionListener,
  ) {
    const { healthIntervalMs, reconnectBaseMs } = opts;
    this.supervisor = new ConnectionSupervisor(
      {
        connect: (signal) => this.connect(signal),
        check: (signal) => this.ping(signal),
        disconnect: () => this.disconnect(),
      },
      { healthIntervalMs, reconnectBaseMs },
    );
    this.supervisor.on('changed', (state) => this.changed(state));
  }

  get name(): string {
    return this.server.name;
  }

  /** Runs the first connection attempt; resolves when it settled (a failure schedules retries, never rejects). */
  start(): Promise<void> {
    return this.supervisor.start();
  }

  isConnected(): boolean {
    return this.client !== undefined;
  }

  /** The tools the server listed last (kept while it is unavailable, for diagnosis and suggestions). */
  listKnownTools(): readonly Tool[] {
    return this.tools;
  }

  status(): ServerStatus {
    const { state, lastError, connectedAt, nextRetryAt } = this.supervisor;
    return {
      state,
      url: this.server.mcpUrl,
      lastError: lastError === undefined ? undefined : describeError(lastError),
      connectedAt,
      nextRetryAt,
      era: this.client?.getProtocolEra(),
      tools: this.tools.map((t) => t.name),
    };
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
      return await client.callTool(
        { name: tool, arguments: args },
        { signal, onprogress, timeout: timeoutMs, resetTimeoutOnProgress: onprogress !== undefined },
      );
    } catch (err) {
      if (err instanceof ProtocolError || signal?.aborted || (await this.supervisor.check())) throw err;
      throw this.unavailable(err);
    }
  }

  /** Lists tools again (a call named a tool the cached catalog lacks). Returns false when that failed. */
  async refreshTools(): Promise<boolean> {
    const client = this.client;
    if (!client) return false;
    try {
      const { tools } = await client.listTools(undefined, {
        timeout: this.opts.connectTimeoutMs,
        cacheMode: 'refresh',
      });
      if (client === this.client) this.replaceTools(tools);
      return true;
    } catch {
      return false;
    }
  }

  /** Stops timers and closes the client. The connection cannot be restarted. */
  close(): Promise<void> {
    return this.supervisor.close();
  }

  private async connect(signal: AbortSignal): Promise<void> {
    const client = this.newClient();
    const timeout = this.opts.connectTimeoutMs;
    try {
      await client.connect(
        new StreamableHTTPClientTransport(new URL(this.server.mcpUrl), {
          fetch: fetchWithHeaders(this.server.headers),
        }),
        { timeout, signal },
      );
      const { tools } = await client.listTools(undefined, { timeout, signal });
      this.toolsDiffer = this.supervisor.state !== ConnectionState.connecting && !sameTools(this.tools, tools);
      this.client = client;
      this.tools = tools;
    } catch (err) {
      await client.close().catch(() => undefined);
      throw err;
    }
  }

  private async ping(signal: AbortSignal): Promise<void> {
    const client = this.client;
    if (!client) throw new Error('not connected');
    const timeout = this.opts.connectTimeoutMs;
    try {
      // 2026-07-28 has no ping; server/discover is its cheapest round trip.
      await (client.getProtocolEra() === 'modern'
        ? client.discover({ timeout, signal })
        : client.ping({ timeout, signal }));
    } catch (err) {
      // A JSON-RPC error is still an answer: the server is alive.
      if (!(err instanceof ProtocolError)) throw err;
    }
  }

  private async disconnect(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    await client?.close();
  }

  private newClient(): Client {
    const client: Client = new Client(CLIENT_INFO, {
      versionNegotiation: { mode: this.opts.era },
      // Covers both eras when the server advertises tools.listChanged (2026-07-28 rides subscriptions/listen).
      listChanged: {
        tools: {
          debounceMs: LIST_CHANGED_DEBOUNCE_MS,
          onChanged: (error, tools) => this.listChanged(client, error, tools),
        },
      },
    });
    // A dropped stream or failed send is a hint, not proof: confirm with a ping before declaring the server down.
    client.onerror = () => {
      if (client === this.client) void this.supervisor.check();
    };
    client.onclose = () => {
      if (client === this.client) this.supervisor.lost(new Error('the connection closed'));
    };
    return client;
  }

  private changed(state: ConnectionState): void {
    if (state === ConnectionState.unavailable)
      return this.listener.down(this.name, describeError(this.supervisor.lastError));
    if (state !== ConnectionState.connected) return;
    this.listener.up(this.name, this.tools);
    if (this.toolsDiffer) this.listener.toolsChanged(this.name, this.tools);
    this.toolsDiffer = false;
  }

  private listChanged(client: Client, error: Error | null, tools: Tool[] | null): void {
    if (client !== this.client) return;
    if (error) void this.supervisor.check();
    else if (tools) this.replaceTools(tools);
  }

  private replaceTools(tools: Tool[]): void {
    if (sameTools(this.tools, tools)) return;
    this.tools = tools;
    this.listener.toolsChanged(this.name, tools);
  }

  private unavailable(cause?: unknown): ServerUnavailableError {
    const { lastError, nextRetryAt } = this.supervisor;
    return new ServerUnavailableError(
      this.name,
      this.server.mcpUrl,
      lastError === undefined ? undefined : describeError(lastError),
      nextRetryAt,
      { cause },
    );
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
