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
/** State graph planner. */
export { planInputSchema, StateGraph, type Bridge, type PlanArgs, type ToolSummary } from './planner';
/** Agent-facing text and the /catalog document. */
export { catalogJson, toolCatalogueText } from './describe';
