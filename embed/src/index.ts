/**
 * Stoa's embedding API: build executors, routers, gateways, dispatchers and squares in TypeScript, with typed
 * extension points. This module is the package's whole public surface (`import … from 'stoa'`); everything
 * else in the repository is internal and may change between minor versions.
 *
 * @packageDocumentation
 */
export {
  createDispatcher,
  createExecutor,
  createGateway,
  createRouter,
  createSquare,
  loadConfig,
  type ConfigFile,
  type ConfigInput,
  type CreateOptions,
  type DispatcherConfigInput,
  type ExecutorConfigInput,
  type GatewayConfigInput,
  type RouterConfigInput,
  type SquareConfigInput,
  type StoaServer,
} from './servers';
export type { ExecutorExtensions } from '../../apps/executor/src';
/** Who is calling: every session, job and artifact belongs to one principal. */
export type { Principal } from '@stoa/core';
/** `StoaServer.handler`: a server's whole request handler, to mount in your own HTTP server or Express app. */
export type { RequestHandler } from '@stoa/auth';
/** Identity extension point (asked before Entra ID / no-op auth). */
export {
  CUSTOM_PRINCIPAL_RESOLVER as PRINCIPAL_RESOLVER,
  type CustomPrincipalResolver as PrincipalResolver,
  type ResolvedIdentity,
} from '@stoa/auth';
/** Search extension point and the catalog it indexes. */
export {
  Bm25SearchBackend,
  TOOL_SEARCH_BACKEND,
  type DomainCatalog,
  type SearchCategory,
  type SearchMatch,
  type SearchMatches,
  type SkillDef,
  type StateSpec,
  type ToolDef,
  type ToolSearchBackend,
} from '@stoa/tools';
/** Send extension point, `<blob>` ids and download links. */
export {
  ARTIFACT_RESOLVER,
  PUBLISHERS,
  type ArtifactResolver,
  type PublicUrl,
  type PublishItem,
  type PublishOutcome,
  type PublishRequest,
  type Publisher,
} from '@stoa/transfer';
/** Execution hooks extension point. */
export { EXECUTION_HOOKS, type ExecuteResult, type ExecutionHooks, type HookContext } from '@stoa/execution';
