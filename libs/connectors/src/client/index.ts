/** A client session over several MCP servers: merged namespaced catalog, routing, health checks, reconnects. */
export { MultiServerSession } from './multi-server-session';
/** What to connect to and how (`ServerSpec`, options), and what the session reports (tools, status, events). */
export {
  ProtocolMode,
  ServerState,
  type CallToolOptions,
  type CallToolResult,
  type HeadersSource,
  type MultiServerSessionOptions,
  type ServerSpec,
  type ServerStatus,
  type SessionEvents,
  type SessionTool,
  type ToolArguments,
} from './multi-server.types';
/** Errors a session throws besides `InvalidInputError` (bad specs) from `@stoa/core`. */
export { ServerUnavailableError, UnknownServerError, UnknownToolError } from './multi-server.errors';
/** The separator of qualified tool names (`${server}__${tool}`). */
export { TOOL_NAME_SEPARATOR } from './tool-names';
