/** Streamable HTTP endpoint serving both MCP protocol eras. */
export { McpEndpoint, type McpEndpointOptions, type McpRequest } from './mcp-endpoint';
/** Tool definitions and the server spec an app provides. */
export { defineTool, integer, RawToolResult, TaskCreated, ToolFailure, type McpServerSpec, type TaskBackend, type TaskView, type ToolContext, type ToolDefinition } from './mcp.types';
/** Tasks extension helpers. */
export { TASKS_EXTENSION } from './tasks';
/** Handler value / error → MCP tool result. */
export { errorToToolResult, taskWire, toToolResult } from './tool-result';
/** Tools as tools/list shows them (for GET /catalog). */
export { listedTools, type ListedTool } from './listed-tools';
