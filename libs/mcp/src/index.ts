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
  type LogLevel,
  type McpExtensionKit,
  type McpServerSpec,
  type TaskBackend,
  type TaskOutcome,
  type TaskRun,
  type TaskView,
  type ToolContext,
  type ToolDefinition,
} from './mcp.types';
/** The Tasks extension identifier (2026-07-28). */
export { declaredCapabilities, TASKS_EXTENSION } from './tasks';
/** A `subscriptions/listen` asking for task notifications (connectors relay it to the upstream owning the tasks). */
export { taskListenOf, type TaskListenRequest } from './task-listen';
/** Ids a tool result refers to (session, job, batch) in its `_meta`, and the code-tool name rule. */
export { isExecuteTool, resultRefs, type ResultRefs } from './result-refs';
/** Tools as tools/list shows them (for GET /catalog). */
export { listedTools, type ListedTool } from './listed-tools';
/** Requests refused before the SDK (HTTP method, Content-Type, unbounded names and ids). */
export { envelopeRefusal, isStatelessMcpPost, type Refusal } from './request-guard';
/** An app's `/mcp` served in front of Express and Nest for callers known without the guard. */
export { mcpFrontDoor } from './front-door';
/** MCP resources an app serves for the caller, with 2026-07-28 cache hints. */
export {
  combinedResources,
  resourceNotFound,
  type CacheHint,
  type McpResource,
  type McpResourceContents,
  type McpResourceTemplate,
  type ReadResult,
  type ResourceProvider,
} from './resources';
/** MCP prompts and completion/complete an app serves for the caller (connectors: their upstreams'). */
export {
  promptNotFound,
  type CompleteParams,
  type CompletionProvider,
  type McpPrompt,
  type PromptCaller,
  type PromptGetParams,
  type PromptProvider,
} from './prompts';
/** The Skills extension (SEP-2640): skills/list, skills/get. */
export {
  SKILLS_EXTENSION,
  skillNotFound,
  type SkillEntry,
  type SkillFile,
  type SkillProvider,
} from './skills-extension';
