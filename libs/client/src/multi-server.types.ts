import type { CallToolResult, ProgressCallback, ProtocolEra, Tool } from '@modelcontextprotocol/client';
import type { ConnectionState } from './connection-supervisor';

/** Headers sent with every request to a server; a function is awaited per request (rotating tokens). */
export type HeadersSource = Record<string, string> | (() => Promise<Record<string, string>>);

/** One MCP server the session talks to. */
export interface ServerSpec {
  /** Unique in the session; prefixes the server's tool names (`alpha` → `alpha__execute_alpha_code`). */
  name: string;
  /** Base URL (`http://host:8000`) or the endpoint itself (`http://host:8000/mcp`); both work. */
  url: string;
  /** E.g. `{ Authorization: 'Bearer …' }`. Transport-managed headers (`mcp-session-id` …) win over these. */
  headers?: HeadersSource;
  /** Roles this server serves; a session opened with `role` keeps only matching servers (or ones with no roles). */
  roles?: string[];
}

/** Protocol era the session asks for: `auto` negotiates 2026-07-28 and falls back to 2025; `legacy` speaks 2025. */
export const ProtocolMode = { auto: 'auto', legacy: 'legacy' } as const;
export type ProtocolMode = (typeof ProtocolMode)[keyof typeof ProtocolMode];

/** Options of `MultiServerSession.connect`. */
export interface MultiServerSessionOptions {
  /** Keep only servers whose `roles` include this one, plus servers that declare no roles. */
  role?: string;
  /** First reconnect delay; doubles per failed attempt up to 30 s, each delay drawn from [½, 1] of that. Default 1000. */
  reconnectBaseMs?: number;
  /** How often a connected server is health-checked (`ping`, or `server/discover` on 2026-07-28). Default 15000. */
  healthIntervalMs?: number;
  /** Bound on one connect attempt (handshake + `tools/list`) and on one health check. Default 10000. */
  connectTimeoutMs?: number;
  /** Default `auto`. */
  era?: ProtocolMode;
}

/** The options with every default applied. */
export type ResolvedSessionOptions = Required<Omit<MultiServerSessionOptions, 'role'>>;

/** Lifecycle of one server inside a session (`connecting`, `connected`, `unavailable`). */
export type ServerState = ConnectionState;

/** A tool of one server, as the merged catalog lists it. */
export type SessionTool = Tool & {
  /** The server that owns it. */
  server: string;
  /** `${server}__${name}`: unique in the session and still a valid MCP tool name. */
  qualifiedName: string;
};

/** What `session.status()` reports for one server. */
export interface ServerStatus {
  state: ServerState;
  /** The MCP endpoint in use (always ends with `/mcp`). */
  url: string;
  /** The most recent failure (connect, health check or transport), kept after recovery for diagnosis. */
  lastError: string | undefined;
  /** When the current connection was established; undefined unless connected. */
  connectedAt: Date | undefined;
  /** When the next reconnect attempt is due; undefined unless unavailable. */
  nextRetryAt: Date | undefined;
  /** Negotiated era of the current connection. */
  era: ProtocolEra | undefined;
  /** Original tool names last listed by the server (kept while it is unavailable). */
  tools: string[];
}

/** Per-call options of `session.callTool`. */
export interface CallToolOptions {
  /** Aborting cancels the call on the server (MCP cancellation). */
  signal?: AbortSignal;
  /** Receives the server's progress notifications; each one also restarts `timeoutMs`. */
  onprogress?: ProgressCallback;
  /** Request timeout; default the SDK's 60 s. */
  timeoutMs?: number;
}

/** Tool arguments as JSON. */
export type ToolArguments = Record<string, unknown>;

/** The result of a tool call, as the server sent it. */
export type { CallToolResult };

/** Events of a `MultiServerSession` (typed `EventEmitter` map). */
export interface SessionEvents {
  /** A server connected (first time or after an outage); `tools` is its fresh catalog. */
  serverUp: [event: { server: string; tools: SessionTool[] }];
  /** A server became unavailable; the session retries it in the background. */
  serverDown: [event: { server: string; error: string }];
  /** A server's catalog changed (`notifications/tools/list_changed`, or different tools after a reconnect). */
  toolsChanged: [event: { server: string; tools: SessionTool[] }];
}
