/** Domain catalog types (tools, states, skills). */
export type { DomainCatalog, ParameterSpec, ReturnSpec, SkillDef, StateSpec, ToolDef } from './tools.types';
/** Tool manifest validation. */
export { buildCatalog } from './manifest';
/** server.yaml `tools:` / `skills:` and loading them. */
export {
  kernelToolSpecs,
  loadDomain,
  searchConfigSchema,
  skillsConfigSchema,
  toolsConfigSchema,
  type LoadedDomain,
  type SearchConfig,
} from './tools.config';
/** BM25 tool and skill search. */
export {
  searchInputSchema,
  STOP_WORDS,
  ToolSearch,
  toolAffordances,
  type SearchCategory,
  type SearchHit,
} from './search';
/** The search extension point: a custom ranking for search_{name}_tools (BM25 is the default). */
export {
  Bm25SearchBackend,
  TOOL_SEARCH_BACKEND,
  type SearchMatch,
  type SearchMatches,
  type ToolSearchBackend,
} from './search-backend';
/** State graph planner. */
export { planInputSchema, StateGraph, type Bridge, type PlanArgs, type ToolSummary } from './planner';
/** Agent-facing text and the /catalog document. */
export { catalogJson, toolCatalogueText } from './describe';
/** The server's skills over the Skills extension (SEP-2640) and as `skill://` resources. */
export { SkillResources } from './skill-resources';
