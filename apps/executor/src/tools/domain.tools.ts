import { z } from 'zod';
import { defineTool, ToolFailure, type ToolDefinition } from '@stoa/mcp';
import {
  planInputSchema,
  searchInputSchema,
  StateGraph,
  ToolSearch,
  type DomainCatalog,
  type SearchConfig,
  type ToolSearchBackend,
} from '@stoa/tools';

/** search / load_skill / plan tools, each registered only when the catalog has what it needs (reference §1.1). */
export function domainTools(
  name: string,
  catalog: DomainCatalog,
  limits?: SearchConfig,
  backend?: ToolSearchBackend,
): ToolDefinition[] {
  const execute = `execute_${name}_code`;
  const loadSkill = `load_${name}_skill`;
  const out: ToolDefinition[] = [];
  if (catalog.tools.length || catalog.skills.length) {
    const search = new ToolSearch(catalog, execute, loadSkill, limits, backend);
    out.push(
      defineTool({
        name: `search_${name}_tools`,
        description:
          `Search ${name} domain tools and skills by name, description or what they are for. ` +
          `Tools are Python functions you call inside ${execute}; skills are step-by-step workflows you read with ${loadSkill}. ` +
          "Narrow with category='tools' or 'skills'; an empty query with top=999 lists the full catalog.",
        input: searchInputSchema,
        annotations: { readOnlyHint: true, openWorldHint: false },
        handler: (a) =>
          search.answerAsync(
            a,
            `No tools or skills matched '${a.query}'. Broaden or rephrase the query, or pass an empty string with top=999 to list the full catalog.`,
          ),
      }),
    );
  }
  if (catalog.skills.length) {
    const byName = new Map(catalog.skills.map((s) => [s.name, s]));
    out.push(
      defineTool({
        name: loadSkill,
        description: `Load a ${name} skill by name: the full markdown of a tested, step-by-step workflow to follow with ${execute}. Find names with search_${name}_tools(category='skills').`,
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
          `Plan ${name} workflows over their states. Modes: 'overview' (start here: the states, the tools between them, the skills); ` +
          "'next_steps' with current_state (tools that apply there); 'path' with current_state and target_state (shortest tool sequence); " +
          `'tool' with tool_name (that tool's transition). Otherwise use ${execute} directly.`,
        input: planInputSchema,
        annotations: { readOnlyHint: true, openWorldHint: false },
        handler: (a) => Promise.resolve(graph.answer(a)),
      }),
    );
  }
  return out;
}
