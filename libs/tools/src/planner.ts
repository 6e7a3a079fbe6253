import { z } from 'zod';
import { ToolFailure } from '@stoa/mcp';
import type { DomainCatalog } from './tools.types';

/** Arguments of every `plan_*_workflow` tool (reference §4.7). */
export const planInputSchema = z.object({
  domain: z.string().default('').describe('Limit overview to one domain (token prefix)'),
  mode: z.string().default('overview').describe("'overview', 'next_steps', 'path' or 'tool'"),
  current_state: z.string().default('').describe("A state token like 'domain.state_name'"),
  target_state: z.string().default('').describe('Goal state for path mode'),
  tool_name: z.string().default('').describe('Tool for tool mode'),
});
export type PlanArgs = z.output<typeof planInputSchema>;

/** A tool as the planner shows it. */
export interface ToolSummary {
  name: string;
  server: string;
  description: string;
  requires: string[];
  produces: string[];
}

/** A cross-server link between states (router only). */
export interface Bridge {
  from_state: string;
  to_state: string;
  description: string;
}

interface SkillRef {
  name: string;
  description: string;
  domain: string;
  states: string[];
}

const START = '(start)';

/** The state graph of one or more servers and the four `plan_*_workflow` modes (reference §4.7). */
export class StateGraph {
  private readonly tools: ToolSummary[];
  private readonly from = new Map<string, ToolSummary[]>();
  private readonly labels = new Map<string, string>();
  private readonly affordances = new Map<string, string[]>();
  private readonly skills: SkillRef[];

  constructor(
    catalogs: readonly DomainCatalog[],
    private readonly executeHint: string,
    private readonly bridges: readonly Bridge[] = [],
  ) {
    this.tools = catalogs.flatMap((c) =>
      c.tools
        .filter((t) => t.requires.length || t.produces.length)
        .map((t) => ({
          name: t.name,
          server: c.serverName,
          description: t.description,
          requires: t.requires,
          produces: t.produces,
        })),
    );
    for (const b of bridges)
      this.tools.push({
        name: `bridge:${b.from_state}→${b.to_state}`,
        server: '(bridge)',
        description: b.description,
        requires: [b.from_state],
        produces: [b.to_state],
      });
    for (const t of this.tools) for (const r of t.requires.length ? t.requires : [START]) push(this.from, r, t);
    for (const c of catalogs)
      for (const s of c.states) {
        if (s.description) this.labels.set(s.token, s.description);
        this.affordances.set(s.token, s.affordances);
      }
    this.skills = catalogs.flatMap((c) =>
      c.skills.map((s) => ({ name: s.name, description: s.description, domain: s.domain, states: s.states })),
    );
  }

  /** True when any tool carries a state annotation (the plan tool is registered only then). */
  get annotated(): boolean {
    return this.tools.length > 0;
  }

  /** One `plan_*_workflow` call: dispatches on `mode`. */
  /** One `plan_*_workflow` call; a refused argument (unknown mode, missing state, unknown tool) is a ToolFailure. */
  answer(a: PlanArgs): Record<string, unknown> | ToolFailure {
    const out = this.byMode(a);
    return typeof out.error === 'string' ? new ToolFailure(out) : out;
  }

  private byMode(a: PlanArgs): Record<string, unknown> {
    switch (a.mode) {
      case 'overview':
        return this.overview(a.domain);
      case 'next_steps':
        return this.nextSteps(a.current_state);
      case 'path':
        return this.path(a.current_state, a.target_state);
      case 'tool':
        return this.tool(a.tool_name);
      default:
        return { error: `Unknown mode '${a.mode}'. Use: overview, next_steps, path, tool.` };
    }
  }

  overview(domain: string): Record<string, unknown> {
    const all = this.domains();
    const wanted = domain ? all.filter((d) => d === domain) : all;
    if (!wanted.length) {
      return domain
        ? { message: `No state graph found for domain '${domain}'.`, available_domains: all, hint: this.hint() }
        : { message: 'No domain state graphs available.', hint: this.hint() };
    }
    const out: Record<string, unknown> = {
      domains: wanted.map((d) => ({
        domain: d,
        states: Object.fromEntries(
          this.tokens()
            .filter((t) => domainOf(t) === d)
            .map((t) => [t, this.label(t)]),
        ),
        edges: this.edges(d),
        affordances: {},
        skills: this.skills
          .filter((s) => s.domain === d && s.states.length)
          .map(({ name, description, states }) => ({ name, description, states })),
      })),
    };
    if (this.bridges.length)
      out.bridges = this.bridges.map((b) => ({ from: b.from_state, to: b.to_state, description: b.description }));
    return out;
  }

  nextSteps(state: string): Record<string, unknown> {
    if (!state) return { error: "Provide a 'current_state' parameter (e.g. 'domain.state_name')." };
    const leaving = this.from.get(state) ?? [];
    const next = [...new Set(leaving.flatMap((t) => t.produces))].sort();
    const producers = this.tools.filter((t) => t.produces.includes(state));
    const out: Record<string, unknown> = {
      state,
      affordances: this.affordances.get(state) ?? [],
      tools_from_here: leaving,
      next_states: next,
    };
    if (producers.length) out.tools_that_produce_this_state = producers;
    const skills = this.relevantSkills([state, ...next]);
    if (skills.length) out.relevant_skills = skills;
    if (!leaving.length)
      out.hint = `No annotated tools transition from '${state}'. You can always use ${this.executeHint} to work directly in the environment.`;
    return out;
  }

  path(source: string, target: string): Record<string, unknown> {
    if (!source || !target) return { error: "Provide both 'current_state' (source) and 'target_state' parameters." };
    if (source === target) return { source, target, path: [] };
    const prev = new Map<string, { tool: ToolSummary; from: string }>();
    const queue = [source];
    const seen = new Set([source]);
    while (queue.length && !seen.has(target)) {
      const state = queue.shift() as string;
      for (const tool of this.from.get(state) ?? []) {
        for (const p of tool.produces) {
          if (seen.has(p)) continue;
          seen.add(p);
          prev.set(p, { tool, from: state });
          queue.push(p);
        }
      }
    }
    if (!seen.has(target)) {
      return {
        source,
        target,
        path: null,
        hint: `No annotated tool path from '${source}' to '${target}'. You can use ${this.executeHint} to bridge the gap in code, or call plan with mode='next_steps' to see what is reachable.`,
      };
    }
    const steps: { tool: string; server: string; from_state: string; to_state: string }[] = [];
    for (let at = target; at !== source;) {
      const step = prev.get(at) as { tool: ToolSummary; from: string };
      steps.unshift({ tool: step.tool.name, server: step.tool.server, from_state: step.from, to_state: at });
      at = step.from;
    }
    const out: Record<string, unknown> = { source, target, path: steps };
    const skills = this.relevantSkills([source, ...steps.map((s) => s.to_state)]);
    if (skills.length) out.relevant_skills = skills;
    return out;
  }

  tool(name: string): Record<string, unknown> {
    if (!name) return { error: "Provide a 'tool_name' parameter." };
    const t = this.tools.find((x) => x.name === name);
    return t
      ? { ...t }
      : {
          error: `Tool '${name}' not found in the state graph.`,
          hint: 'The tool may exist but have no state annotations. Use search_tools to find it by name or description.',
        };
  }

  private domains(): string[] {
    return [...new Set(this.tokens().map(domainOf))].sort();
  }

  private tokens(): string[] {
    const all = new Set<string>();
    for (const t of this.tools) for (const s of [...t.requires, ...t.produces]) all.add(s);
    for (const s of this.skills) for (const st of s.states) all.add(st);
    return [...all].sort();
  }

  private edges(domain: string): { from: string; to: string; tool: string }[] {
    const seen = new Set<string>();
    const edges: { from: string; to: string; tool: string }[] = [];
    for (const t of this.tools) {
      if (t.server === '(bridge)' || ![...t.requires, ...t.produces].some((s) => domainOf(s) === domain)) continue;
      for (const from of t.requires.length ? t.requires : [START]) {
        for (const to of t.produces) {
          const key = `${from}|${to}|${t.name}`;
          if (!seen.has(key)) edges.push({ from, to, tool: t.name });
          seen.add(key);
        }
      }
    }
    return edges;
  }

  private label(token: string): string {
    return this.labels.get(token) ?? (token.includes('.') ? token.slice(token.indexOf('.') + 1) : token).toUpperCase();
  }

  private relevantSkills(states: string[]): SkillRef[] {
    const wanted = new Set(states);
    return this.skills.filter((s) => s.states.some((st) => wanted.has(st)));
  }

  private hint(): string {
    return `You can always use ${this.executeHint} to work directly in a domain environment, even without an annotated state graph.`;
  }
}

function domainOf(token: string): string {
  return token.includes('.') ? token.slice(0, token.indexOf('.')) : 'default';
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
