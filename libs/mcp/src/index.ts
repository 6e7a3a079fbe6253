/** Streamable HTTP endpoint serving both MCP protocol eras. */
export { McpEndpoint, type McpEndpointOptions, type McpRequest } from './mcp-endpoint';
/** MCP over stdio (a local agent starts the server itself). */
export { serveMcpStdio } from './stdio';
/** Tool definitions and the server spec an app provides. */
export {
  defineTool,
  integer,
  RawToolResult,
  TaskCreated,
  ToolFailure,
  type McpServerSpec,
  type TaskBackend,
  type TaskView,
  type ToolContext,
  type ToolDefinition,
} from './mcp.types';
/** Ids a tool result refers to (session, job, batch) in its `_meta`, and the code-tool name rule. */
export { isExecuteTool, resultRefs, type ResultRefs } from './result-refs';
/** Tools as tools/list shows them (for GET /catalog). */
export { listedTools, type ListedTool } from './listed-tools';
/** Requests refused before the SDK (HTTP method, Content-Type, unbounded names and ids). */
export { envelopeRefusal, type Refusal } from './request-guard';
