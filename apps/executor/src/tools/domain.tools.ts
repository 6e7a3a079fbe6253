import { z } from 'zod';
import { defineTool, integer, type ToolDefinition } from '@stoa/mcp';
import { StateGraph, ToolSearch, type DomainCatalog, type SearchCategory } from '@stoa/tools';

/** search / load_skill / plan tools, each registered only when the catalog has what it needs (reference §1.1). */
export function domainTools(name: string, catalog: DomainCatalog): ToolDefinition[] {
  const execute = `execute_${name}_code`;
  const loadSkill = `load_${name}_skill`;
  const out: ToolDefinition[] = [];
  if (catalog.tools.length || catalog.skills.length) {
    const search = new ToolSearch(catalog, execute, loadSkill);
    out.push(
      defineTool({
        name: `search_${name}_tools`,
        description:
          `Search ${name} domain tools and skills by name or description (BM25 over names, descriptions and what each tool is for). ` +
          `Tools are Python functions you call inside ${execute}; skills are step-by-step workflows you read with ${loadSkill}. ` +
          "Narrow with category='tools' or category='skills'; an empty query with top=999 lists the full catalog.",
        input: z.object({
          query: z.string().describe('What you want to do, in your own words'),
          top: integer().default(5).describe('Results per category'),
          category: z.string().default('all').describe("'all', 'tools' or 'skills'"),
        }),
        annotations: { readOnlyHint: true, openWorldHint: false },
        handler: ({ query, top, category }) => {
          if (!['all', 'tools', 'skills'].includes(category)) return Promise.resolve({ error: `Invalid category '${category}'. Must be 'all', 'tools', or 'skills'.` });
          const result: Record<string, unknown> = search.search(query, top, category as SearchCategory);
          if (!(result.tools as unknown[]).length && !(result.skills as unknown[]).length) {
            result.hint = `No tools or skills matched '${query}'. Broaden or rephrase the query, or pass an empty string with top=999 to list the full catalog.`;
          }
          return Promise.resolve(result);
        },
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
          return Promise.resolve(skill ? skill.content : { error: `Skill '${skill_name}' not found.`, available_skills: [...byName.keys()].sort() });
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
        input: z.object({
          domain: z.string().default('').describe('Limit overview to one domain (token prefix)'),
          mode: z.string().default('overview').describe("'overview', 'next_steps', 'path' or 'tool'"),
          current_state: z.string().default('').describe("A state token like 'domain.state_name'"),
          target_state: z.string().default('').describe('Goal state for path mode'),
          tool_name: z.string().default('').describe('Tool for tool mode'),
        }),
        annotations: { readOnlyHint: true, openWorldHint: false },
        handler: (a) => {
          switch (a.mode) {
            case 'overview':
              return Promise.resolve(graph.overview(a.domain));
            case 'next_steps':
              return Promise.resolve(graph.nextSteps(a.current_state));
            case 'path':
              return Promise.resolve(graph.path(a.current_state, a.target_state));
            case 'tool':
              return Promise.resolve(graph.tool(a.tool_name));
            default:
              return Promise.resolve({ error: `Unknown mode '${a.mode}'. Use: overview, next_steps, path, tool.` });
          }
        },
      }),
    );
  }
  return out;
}
