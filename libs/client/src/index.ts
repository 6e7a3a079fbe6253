/** @stoa/client: the client side of MCP servers — the multi-server agent session and the connection engine. */
/** A client session over several MCP servers: merged namespaced catalog, routing, health checks, reconnects. */
export { MultiServerSession } from './multi-server-session';
/** What to connect to and how (`ServerSpec`, options), and what the session reports (tools, status, events). */
export {
  type CallToolOptions,
  type CallToolResult,
  type HeadersSource,
  type MultiServerSessionOptions,
  type ServerSpec,
  type ServerState,
  type ServerStatus,
  type SessionEvents,
  type SessionTool,
  type ToolArguments,
} from './multi-server.types';
/** Errors a session throws besides `InvalidInputError` (bad specs) from `@stoa/core`. */
export { ServerUnavailableError, UnknownServerError, UnknownToolError } from './multi-server.errors';
/** One line from an error and its causes (socket codes included), for status pages and logs. */
export { describeError } from './multi-server.errors';
/** The one connection state machine (connect, health ticks, backoff with jitter), also driving the connectors' pool. */
export { ConnectionState, ConnectionSupervisor } from './connection-supervisor';
/** A server's MCP endpoint and base URL, whether the configured URL ends with /mcp or not. */
export { upstreamUrls } from './upstream-url';
