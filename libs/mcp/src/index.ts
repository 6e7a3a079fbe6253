/** Streamable HTTP endpoint serving both MCP protocol eras. */
export { McpEndpoint, type McpEndpointOptions, type McpRequest } from './mcp-endpoint';
/** Tool definitions and the server spec an app provides. */
export { defineTool, type McpServerSpec, type ToolContext, type ToolDefinition } from './mcp.types';
/** Handler value / error → MCP tool result. */
export { errorToToolResult, toToolResult } from './tool-result';
