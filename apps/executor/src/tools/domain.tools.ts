import { z } from 'zod';
import { defineTool, ToolFailure, type ToolDefinition } from '@stoa/mcp';
import {
  planInputSchema,
  searchInputSchema,
  StateGraph,
  ToolSearch,
  type DomainCatalog,
  type SearchConfig,
} from '@stoa/tools';

/** search / load_skill / plan tools, each registered only when the catalog has what it needs (reference §1.1). */
export function domainTools(name: string, catalog: DomainCatalog, limits?: SearchConfig): ToolDefinition[] {
  const execute = `execute_${name}_code`;
  const loadSkill = `load_${name}_skill`;
  const out: ToolDefinition[] = [];
  if (catalog.tools.length || catalog.skills.length) {
    const search = new ToolSearch(catalog, execute, loadSkill, limits);
    out.push(
      defineTool({
        name: `search_${name}_tools`,
        description:
          `Search ${name} domain tools and skills by name or description (BM25 over names, descriptions and what each tool is for). ` +
          `Tools are Python functions you call inside ${execute}; skills are step-by-step workflows you read with ${loadSkill}. ` +
          "Narrow with category='tools' or category='skills'; an empty query with top=999 lists the full catalog.",
        input: searchInputSchema,
        annotations: { readOnlyHint: true, openWorldHint: false },
        handler: (a) =>
          Promise.resolve(
            search.answer(
              a,
              `No tools or skills matched '${a.query}'. Broaden or rephrase the query, or pass an empty string with top=999 to list the full catalog.`,
            ),
          ),
      }),
    );
  }
  if (catalog.skills.length) {
    const byName = new Map(catalog.skills.map((s) => [s.name, s]));
    out.push(
      defineTool({
        name: loadSkill,
        description: `Load a ${name} skill by name. Returns the full skill markdown: a tested, step-by-step workflow to follow with ${execute}. Find skill names with search_${name}_tools(category='skills').`,
        input: z.object({ skill_name: z.string().describe('Exact skill name') }),
        annotations: { readOnlyHint: true, openWorldHint: false },
        handler: ({ skill_name }) => {
          const skill = byName.get(skill_name);
          return Promise.resolve(
            skill
              ? skill.content
              : new ToolFailure({
                  error: `Skill '${skill_name}' not found.`,
                  available_skills: [...byName.keys()].sort(),
                }),
          );
        },
      }),
    );
  }
  const graph = new StateGraph([catalog], execute);
  if (graph.annotated) {
    out.push(
      defineTool({
        name: `plan_${name}_workflow`,
        description:
          `Plan and navigate ${name} workflow states. Use 'overview' mode at the start of a task to see the states, the tools that move between them and the skills; ` +
          "'next_steps' with current_state to see which tools apply from there; 'path' with current_state and target_state for the shortest tool sequence; " +
          `'tool' with tool_name for one tool's transition. For tasks not covered, use ${execute} directly.`,
        input: planInputSchema,
        annotations: { readOnlyHint: true, openWorldHint: false },
        handler: (a) => Promise.resolve(graph.answer(a)),
      }),
    );
  }
  return out;
}
