import { LRUCache } from 'lru-cache';
import { z } from 'zod';
import type { Principal } from '@stoa/core';
import {
  proxyTool,
  relayLog,
  relayProgress,
  type Upstream,
  type UpstreamCatalog,
  type UpstreamPool,
} from '@stoa/connectors';
import {
  defineTool,
  isExecuteTool,
  RawToolResult,
  resultRefs,
  ToolFailure,
  type ToolContext,
  type ToolDefinition,
} from '@stoa/mcp';
import {
  planInputSchema,
  searchInputSchema,
  StateGraph,
  ToolSearch,
  type Bridge,
  type DomainCatalog,
  type ParameterSpec,
  type SearchConfig,
  type ToolDef,
} from '@stoa/tools';

/**
 * 2025-era callers keep their kernel through their MCP session, as on an executor: the router remembers which
 * upstream execution session each of their router sessions created and passes it on (upstream calls are
 * stateless 2026-07-28 requests). Bounded; entries expire with idle sessions.
 */
const legacyKernels = new LRUCache<string, string>({ max: 10_000, ttl: 6 * 3_600_000, updateAgeOnGet: true });

/** Every upstream MCP tool, named as the upstream names it, forwarded for the caller (schemas verbatim). */
export function proxyTools(pool: UpstreamPool): ToolDefinition[] {
  return pool.tools().map(({ upstream, tool }) =>
    proxyTool(tool, async (args: unknown, ctx: ToolContext) => {
      const route = pool.route(tool.name) ?? { upstream };
      const input = { ...((args ?? {}) as Record<string, unknown>) };
      const key =
        ctx.transportSessionId && isExecuteTool(tool.name) ? `${ctx.transportSessionId}\u0000${tool.name}` : undefined;
      let injected = false;
      if (key && input.execution_session_id == null) {
        const known = legacyKernels.get(key);
        if (known) [input.execution_session_id, injected] = [known, true];
      }
      const result = await pool.call(route.upstream, ctx.principal, tool.name, input, {
        signal: ctx.signal,
        onProgress: relayProgress(ctx),
        log: relayLog(ctx),
      });
      const sid = key ? resultRefs(result).session_id : undefined;
      if (key && sid) legacyKernels.set(key, sid);
      else if (key && injected && result.isError) legacyKernels.delete(key); // the upstream session is gone: the next call starts afresh
      return new RawToolResult(result);
    }),
  );
}

/** The bridge problems the reference refuses to start with (§8.6), or undefined when all are valid. */
export function invalidBridges(
  router: string,
  bridges: readonly Bridge[],
  catalogs: readonly DomainCatalog[],
): string | undefined {
  const produced = new Set(catalogs.flatMap((c) => c.tools.flatMap((t) => t.produces)));
  const required = new Set(catalogs.flatMap((c) => c.tools.flatMap((t) => t.requires)));
  const problems: string[] = [];
  for (const b of bridges) {
    const parts: string[] = [];
    if (!produced.has(b.from_state))
      parts.push(`from_state '${b.from_state}' not found in any upstream's state_produces`);
    if (!required.has(b.to_state)) parts.push(`to_state '${b.to_state}' not found in any upstream's state_requires`);
    if (parts.length) problems.push(`Invalid bridge edge in '${router}' config: ${parts.join('; ')}`);
  }
  return problems.length ? problems.join('\n') : undefined;
}

interface Catalogued {
  upstream: Upstream;
  catalog: DomainCatalog;
}

/** search / load_skill / plan over every healthy upstream (reference §8.2, §8.3, §8.6). */
export function routerTools(
  router: string,
  pool: UpstreamPool,
  bridges: readonly Bridge[],
  limits?: SearchConfig,
): ToolDefinition[] {
  const live: Catalogued[] = pool
    .upstreams()
    .filter((u) => u.catalog)
    .map((u) => ({ upstream: u, catalog: u.catalog!.domain }));
  const catalogs = live.map((l) => l.catalog);
  const upstreamOf = new Map(live.map((l) => [l.catalog.serverName, l.upstream.name]));
  // Plain MCP servers are searched by their MCP tools, called by name (not inside an execute_<server>_code).
  const plain = new Map(live.flatMap((l) => plainCatalog(l.upstream.catalog!) ?? []).map((c) => [c.serverName, c]));
  const searchable = catalogs.map((c) => plain.get(c.serverName) ?? c);
  const out: ToolDefinition[] = [];
  const skillTool = `load_${router}_skill`;
  if (searchable.some((c) => c.tools.length || c.skills.length)) {
    const search = new ToolSearch(
      searchable,
      (server, tool) => (plain.has(server) ? tool.name : `execute_${server}_code`),
      (skill, server) =>
        `Load with ${skillTool}(skill_name="${skill.name}", upstream="${upstreamOf.get(server) ?? server}")`,
      limits,
    );
    out.push(
      defineTool({
        name: `search_${router}_tools`,
        description:
          `Search the domain tools and skills of every server behind ${router} by name, description or what they are for. ` +
          "Each hit names its server and, in to_access, how to call it: a domain tool inside that server's execute_<server>_code, a plain MCP tool by its name; read skills with " +
          `${skillTool}. Narrow with category='tools' or 'skills'; an empty query with top=999 lists everything.`,
        input: searchInputSchema,
        annotations: { readOnlyHint: true, openWorldHint: false },
        handler: (a) =>
          Promise.resolve(
            search.answer(
              a,
              `No tools or skills matched '${a.query}'. Broaden or rephrase the query, or pass an empty string with top=999 to list everything.`,
            ),
          ),
      }),
    );
  }
  if (catalogs.some((c) => c.skills.length)) out.push(loadSkillTool(router, pool, live));
  const graph = new StateGraph(catalogs, 'the execute_<server>_code tool of the server you are on', bridges);
  if (graph.annotated || bridges.length) out.push(planTool(router, graph));
  return out;
}

function loadSkillTool(router: string, pool: UpstreamPool, live: Catalogued[]): ToolDefinition {
  return defineTool({
    name: `load_${router}_skill`,
    description:
      `Load a skill from any server behind ${router}: the full markdown of a tested, step-by-step workflow. ` +
      'Pass upstream when several servers have a skill of that name (search results show it).',
    input: z.object({
      skill_name: z.string().describe('Exact skill name'),
      upstream: z.string().default('').describe('Upstream that owns the skill (only to disambiguate)'),
    }),
    annotations: { readOnlyHint: true, openWorldHint: false },
    handler: async ({ skill_name, upstream }, ctx) => {
      if (upstream) {
        const target = live.find((l) => l.upstream.name === upstream);
        if (!target)
          return new ToolFailure({
            error: `Unknown upstream '${upstream}'.`,
            available_upstreams: live.map((l) => l.upstream.name),
          });
        return load(pool, target, skill_name, ctx.principal, ctx.signal);
      }
      const matches = live.filter((l) => l.catalog.skills.some((s) => s.name === skill_name));
      if (matches.length > 1) {
        return new ToolFailure({
          error: `Skill '${skill_name}' exists on multiple upstreams: [${matches.map((m) => `'${m.upstream.name}'`).join(', ')}]. Specify the 'upstream' parameter to disambiguate.`,
          matches: matches.map((m) => ({ skill_name, upstream: m.upstream.name })),
        });
      }
      if (!matches.length)
        return new ToolFailure({
          error: `Skill '${skill_name}' not found.`,
          available_skills: [...new Set(live.flatMap((l) => l.catalog.skills.map((s) => s.name)))].sort(),
        });
      return load(pool, matches[0]!, skill_name, ctx.principal, ctx.signal);
    },
  });
}

async function load(
  pool: UpstreamPool,
  target: Catalogued,
  skill: string,
  principal: Principal,
  signal: AbortSignal,
): Promise<RawToolResult> {
  return new RawToolResult(
    await pool.call(
      target.upstream,
      principal,
      `load_${target.catalog.serverName}_skill`,
      { skill_name: skill },
      { signal },
    ),
  );
}

function planTool(router: string, graph: StateGraph): ToolDefinition {
  return defineTool({
    name: `plan_${router}_workflow`,
    description:
      `Plan workflows across every server behind ${router}: one state graph over all their state-annotated tools, joined by the configured bridges. ` +
      "'overview' lists states, tools and skills; 'next_steps' with current_state shows what applies; 'path' with current_state and target_state gives the shortest tool sequence (crossing servers through bridges); 'tool' with tool_name shows one transition.",
    input: planInputSchema,
    annotations: { readOnlyHint: true, openWorldHint: false },
    handler: (a) => Promise.resolve(graph.answer(a)),
  });
}

/**
 * A plain MCP server (no domain catalog, no code-execution tool, such as a square) is searched by its MCP tools:
 * names, descriptions and argument descriptions from tools/list; hits are called by their own name.
 */
function plainCatalog(c: UpstreamCatalog): DomainCatalog | undefined {
  const d = c.domain;
  if (d.tools.length || d.skills.length || !c.mcpTools.length || c.mcpTools.some((t) => isExecuteTool(t.name)))
    return undefined;
  const tools = c.mcpTools.map((t, id): ToolDef => {
    const schema = t.inputSchema as {
      properties?: Record<string, { type?: unknown; description?: unknown }>;
      required?: unknown;
    };
    const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
    const parameters = Object.entries(schema.properties ?? {}).map(([name, p]): ParameterSpec => ({
      name,
      type: typeof p.type === 'string' ? p.type : 'object',
      description: typeof p.description === 'string' ? p.description : '',
      required: required.has(name),
    }));
    return {
      id,
      name: t.name,
      description: t.description ?? '',
      parameters,
      returns: [],
      module: '',
      requires: [],
      produces: [],
      affordances: [],
    };
  });
  return { ...d, tools };
}
