/** @stoa/connectors: the upstream pool (router, gateway, dispatcher) and upstream credentials. The client session is @stoa/client. */
/** Upstream config (`upstreams:` entries, `connectors:` pool settings). */
export {
  poolConfigSchema,
  upstreamSchema,
  type CredentialSource,
  type PoolConfig,
  type UpstreamConfig,
} from './upstream.config';
/** One upstream (state, catalog, health) and the pool of them. */
export { Upstream, type UpstreamEra, type UpstreamState, type UpstreamStatus } from './upstream';
export { UpstreamPool, type UpstreamToolResult } from './upstream-pool';
/** Upstream catalogs (GET /catalog) and glob rules. */
export { exposed, type McpToolInfo, type UpstreamCatalog } from './catalog';
/** Keep-alive HTTP to an upstream (fast-path forwarding, JSON-RPC calls). */
export { UpstreamHttpError, type ForwardResult, type RpcMessage } from './upstream-http';
/** Upstream tools as a connector serves them (schema verbatim), and progress and logs relayed from upstream calls. */
export { proxyTool, relayLog, relayProgress, type LogRelay } from './proxy-tool';
/** The connectors' hot path: 2026-07-28 tool calls streamed to their upstream, with policy hooks. */
export {
  connectorFastPath,
  namedSession,
  taskRelay,
  type FastPathHooks,
  type ForwardOutcome,
  type RpcBody,
} from './fast-path';
/** A fast-path tool call's server span and its count (tool, outcome). */
export { observedToolCall } from './observed-call';
/** How a connector authenticates to each upstream (passthrough, obo, client_credentials, none). */
export * from './credentials';
/** `/health/ready` of connectors: upstream checks, live probes (database, Redis), the answer and its status. */
export { probe, readiness, readinessStatus, upstreamChecks, type Check, type Readiness } from './readiness';
/** Shared connector config pieces (common keys, loading with CONNECTOR_PORT, --help text, CLI overrides). */
export { connectorFields, connectorOverrides, connectorUsage, loadConnectorConfig } from './connector.config';
/** The SDK-path MCP surface of a connector (its tools from the pool) and its `/mcp` route. */
export { ConnectorMcpService, type ConnectorMcpInfo } from './connector-mcp';
/** The module of a connector app: logging, auth, the pool, `/mcp`, plus the app's own parts. */
export { connectorModule, type ConnectorModuleSpec } from './connector-module';
/** Upstreams' resources and skills for the caller, each URI answered by the upstream that owns it. */
export { UpstreamResources } from './upstream-resources';
/** Upstreams' prompts and completion/complete for the caller, each name answered by the upstream that lists it. */
export { UpstreamPrompts } from './upstream-prompts';
