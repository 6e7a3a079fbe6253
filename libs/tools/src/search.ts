import MiniSearch, { type SearchResult } from 'minisearch';
import { stemmer } from 'stemmer';
import { z } from 'zod';
import { integer, ToolFailure } from '@stoa/mcp';
import { searchConfigSchema, type SearchConfig } from './tools.config';
import type { DomainCatalog, SkillDef, StateSpec, ToolDef } from './tools.types';
import type { SearchMatch, ToolSearchBackend } from './search-backend';

/** Arguments of every `search_*_tools` tool (reference §1.4); `top` below 1 is refused (it could only claim "no match"). */
export const searchInputSchema = z.object({
  query: z.string().describe('What you want to do, in your own words'),
  top: integer()
    .min(1, 'top must be at least 1 (results per category); omit it for 5, or pass 999 to list everything')
    .default(5)
    .describe('Results per category'),
  category: z.string().default('all').describe("'all', 'tools' or 'skills'"),
});

/** One search hit as the reference returns it (§1.4). */
export interface SearchHit {
  name: string;
  server_name: string;
  description: string;
  execution_type: 'mcp' | 'skill';
  type: 'tool' | 'skill';
  to_access: string;
  score: number | null;
  state_requires: string[];
  state_produces: string[];
}

export type SearchCategory = 'all' | 'tools' | 'skills';

/** Query and document words that never count (shared with the search-recall bench's variants). */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  'a an the of to in on for and or with by from is are be i me my we it this that how do can what which want need some into using use get'.split(
    ' ',
  ),
);

/** Words (accents folded: Erdős → erdos), snake_case parts and whole identifiers. */
function tokenize(text: string): string[] {
  const lower = fold(text);
  const words = lower.match(/[\p{L}\p{N}]+/gu) ?? [];
  return [...words, ...identifiers(lower)];
}

/**
 * snake_case identifiers (parts joined by single underscores) with the underscores removed. Found from runs of
 * letters, digits and underscores in linear time: a regex such as /\w+(?:_\w+)+/g backtracks quadratically over a
 * long word without an underscore.
 */
function identifiers(lower: string): string[] {
  const out: string[] = [];
  for (const run of lower.match(/[\p{L}\p{N}_]+/gu) ?? []) {
    for (const piece of run.split(/_{2,}/)) {
      const ident = piece.replace(/^_+|_+$/g, '');
      if (ident.includes('_')) out.push(ident.replace(/_/g, ''));
    }
  }
  return out;
}

/** Accents folded, lowercased. */
function fold(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();
}

/** Stemmed terms; stop words (before and after stemming) and one-letter terms dropped. */
function processTerm(term: string): string | null {
  if (term.length < 2 || STOP_WORDS.has(term)) return null;
  const stem = stemmer(term);
  return STOP_WORDS.has(stem) ? null : stem;
}

/**
 * Fuzzy matching costs MiniSearch a (length + distance) × length matrix per word, so it is quadratic in the word's
 * length: only words of 7–32 characters are matched fuzzily (15 % of their length, at most 3 edits); longer ones
 * match exactly or as a prefix. Prefix and fuzzy lookups are the costly ones: only the first 24 terms of a query
 * get them (an agent's query is a sentence or two), later ones match exactly.
 */
const FUZZY_MIN_CHARS = 7;
const FUZZY_MAX_CHARS = 32;
const FUZZY_MAX_EDITS = 3;
const PREFIX_MIN_CHARS = 5;
const EXPANDED_TERMS = 24;
const fuzzy = (t: string, i: number): number | false =>
  i < EXPANDED_TERMS && t.length >= FUZZY_MIN_CHARS && t.length <= FUZZY_MAX_CHARS ? 0.15 : false;
const prefix = (t: string, i: number): boolean => i < EXPANDED_TERMS && t.length >= PREFIX_MIN_CHARS;

/** Characters of a refused word echoed back. */
const ECHO_CHARS = 24;

interface ToolDoc {
  id: number;
  name: string;
  description: string;
  affordances: string;
  /** Parameter and return names and descriptions. */
  signature: string;
}

const INDEX_OPTIONS = {
  fields: ['name', 'description', 'affordances', 'signature'],
  tokenize,
  processTerm,
  searchOptions: {
    boost: { name: 2, affordances: 1.5, signature: 0.5 },
    bm25: { k: 1.5, b: 0.75, d: 0.5 },
    prefix,
    fuzzy,
    maxFuzzy: FUZZY_MAX_EDITS,
  },
};

/** What is indexed of one tool or skill, and the hit it answers as (all but the score). */
interface Entry {
  doc: Omit<ToolDoc, 'id'>;
  hit: Omit<SearchHit, 'score'>;
}

/** One BM25 index (tools, or skills) and the hits it answers with, best first. */
class HitIndex {
  private readonly mini = new MiniSearch<ToolDoc>(INDEX_OPTIONS);

  /** Hits by name, for a custom backend's ranking (the last entry of a name wins). */
  private readonly byName: ReadonlyMap<string, Omit<SearchHit, 'score'>>;

  constructor(private readonly entries: Entry[]) {
    this.mini.addAll(entries.map((e, id) => ({ id, ...e.doc })));
    this.byName = new Map(entries.map((e) => [e.hit.name, e.hit]));
  }

  /** The best `n` hits with a positive score; for an empty query the first `n` entries, score 0. */
  find(query: string, n: number): SearchHit[] {
    if (!query.trim()) return this.entries.slice(0, n).map((e) => ({ ...e.hit, score: 0 }));
    return this.mini
      .search(query, { combineWith: 'OR' })
      .filter((h: SearchResult) => h.score > 0)
      .slice(0, n)
      .map((h) => ({ ...this.entries[h.id as number]!.hit, score: round(h.score) }));
  }

  /** Hits for names ranked elsewhere, in their order; names not in this index are dropped. */
  named(matches: readonly SearchMatch[], n: number): SearchHit[] {
    return matches
      .flatMap((m) => {
        const hit = this.byName.get(m.name);
        return hit ? [{ ...hit, score: m.score }] : [];
      })
      .slice(0, n);
  }
}

/**
 * BM25 search (MiniSearch, k1 = 1.5, b = 0.75) over tools (name + description + affordances, including
 * the affordances of the states each tool produces) and skills (name + description + states).
 */
export class ToolSearch {
  private readonly tools: HitIndex;
  private readonly skills: HitIndex;
  /** A custom backend's index step, started in the constructor; every search waits for it. */
  private readonly indexed?: Promise<void>;

  /**
   * One catalog (an executor) or several (a router: each hit names its server). `executeTool` / `skillTool`
   * are tool names, or functions of the server name (and the tool: a plain MCP tool is called by its own name)
   * for several catalogs. `limits` bound what `answer` accepts.
   */
  constructor(
    catalogs: DomainCatalog | readonly DomainCatalog[],
    executeTool: string | ((server: string, tool: ToolDef) => string),
    skillTool: string | ((skill: SkillDef, server: string) => string),
    private readonly limits: SearchConfig = searchConfigSchema.parse(undefined),
    private readonly backend?: ToolSearchBackend,
  ) {
    const list = Array.isArray(catalogs) ? (catalogs as readonly DomainCatalog[]) : [catalogs as DomainCatalog];
    const execute = typeof executeTool === 'string' ? () => executeTool : executeTool;
    const skillAccess =
      typeof skillTool === 'string' ? (sk: SkillDef) => `Load with ${skillTool}(skill_name="${sk.name}")` : skillTool;
    this.tools = new HitIndex(
      list.flatMap((c) =>
        c.tools.map((t) => ({
          doc: {
            name: t.name,
            description: t.description,
            affordances: toolAffordances(t, c.states).join(' . '),
            signature: signatureText(t),
          },
          hit: {
            name: t.name,
            server_name: c.serverName,
            description: t.description,
            execution_type: 'mcp' as const,
            type: 'tool' as const,
            to_access: `Call via ${execute(c.serverName, t)}`,
            state_requires: t.requires,
            state_produces: t.produces,
          },
        })),
      ),
    );
    this.skills = new HitIndex(
      list.flatMap((c) =>
        c.skills.map((s) => ({
          doc: { name: s.name, description: s.description, affordances: s.states.join(' '), signature: '' },
          hit: {
            name: s.name,
            server_name: c.serverName,
            description: s.description,
            execution_type: 'skill' as const,
            type: 'skill' as const,
            to_access: skillAccess(s, c.serverName),
            state_requires: [],
            state_produces: [],
          },
        })),
      ),
    );
    if (backend) {
      const merged: DomainCatalog = {
        serverName: list[0]?.serverName ?? '',
        tools: list.flatMap((c) => c.tools),
        skills: list.flatMap((c) => c.skills),
        states: list.flatMap((c) => c.states),
      };
      this.indexed = Promise.resolve().then(() => backend.index(merged));
      this.indexed.catch(() => undefined); // reported by the first search
    }
  }

  /** One `search_*_tools` call with the built-in BM25: the reference's category check, the size limits, hits, and `emptyHint` when nothing matched. */
  answer(a: z.output<typeof searchInputSchema>, emptyHint: string): Record<string, unknown> | ToolFailure {
    const refused = this.check(a);
    return refused ?? this.withHint(this.search(a.query, a.top, a.category as SearchCategory), emptyHint);
  }

  /** {@link answer} through the custom backend when there is one (a failing backend is an agent-facing error). */
  async answerAsync(
    a: z.output<typeof searchInputSchema>,
    emptyHint: string,
  ): Promise<Record<string, unknown> | ToolFailure> {
    if (!this.backend) return this.answer(a, emptyHint);
    const refused = this.check(a);
    if (refused) return refused;
    try {
      return this.withHint(await this.viaBackend(a.query, a.top, a.category as SearchCategory), emptyHint);
    } catch (err) {
      return new ToolFailure({
        tools: [],
        skills: [],
        error: `Tool search is unavailable: the server's search backend failed (${(err as Error).message}). Try again shortly, or call list_tools() inside the execute tool to see every domain function.`,
      });
    }
  }

  private check(a: z.output<typeof searchInputSchema>): ToolFailure | undefined {
    if (!['all', 'tools', 'skills'].includes(a.category))
      return new ToolFailure({ error: `Invalid category '${a.category}'. Must be 'all', 'tools', or 'skills'.` });
    const refused = this.refusal(a.query);
    return refused ? new ToolFailure({ tools: [], skills: [], error: refused }) : undefined;
  }

  private withHint(found: { tools: SearchHit[]; skills: SearchHit[] }, emptyHint: string): Record<string, unknown> {
    const result: Record<string, unknown> = { ...found };
    if (!found.tools.length && !found.skills.length) result.hint = emptyHint;
    return result;
  }

  /** Why `query` is refused (too long, or a word too long), or undefined. */
  private refusal(query: string): string | undefined {
    const { max_query_chars: maxQuery, max_term_chars: maxTerm } = this.limits;
    if (query.length > maxQuery) {
      return `Query too long: ${query.length} characters, the limit is ${maxQuery} (search.max_query_chars). Describe what you want to do in a few words, e.g. 'shortest path in a weighted graph'.`;
    }
    const long = longestWord(query);
    if (long.length > maxTerm) {
      return `Query word '${long.slice(0, ECHO_CHARS)}…' is ${long.length} characters long, the limit is ${maxTerm} (search.max_term_chars). Search with ordinary words that describe the task.`;
    }
    return undefined;
  }

  /** A custom backend's names as the reference's hits: unknown names dropped, at most `top` per category. */
  private async viaBackend(
    query: string,
    top: number,
    category: SearchCategory,
  ): Promise<{ tools: SearchHit[]; skills: SearchHit[] }> {
    await this.indexed;
    const m = await this.backend!.search(query, top, category);
    return {
      tools: category !== 'skills' ? this.tools.named(m.tools, top) : [],
      skills: category !== 'tools' ? this.skills.named(m.skills, top) : [],
    };
  }

  search(query: string, top: number, category: SearchCategory): { tools: SearchHit[]; skills: SearchHit[] } {
    const n = Math.max(0, top);
    return {
      tools: category !== 'skills' ? this.tools.find(query, n) : [],
      skills: category !== 'tools' ? this.skills.find(query, n) : [],
    };
  }
}

function signatureText(t: ToolDef): string {
  return [
    ...t.parameters.map((p) => `${p.name} ${p.description}${typeof p.default === 'string' ? ` ${p.default}` : ''}`),
    ...t.returns.map((r) => `${r.name} ${r.description}`),
  ].join(' . ');
}

/** Affordances of the states a tool produces (sorted tokens), then its own; duplicates dropped case-insensitively. */
export function toolAffordances(tool: ToolDef, states: StateSpec[]): string[] {
  const byToken = new Map(states.map((s) => [s.token, s]));
  const all = [...tool.produces.flatMap((t) => byToken.get(t)?.affordances ?? []), ...tool.affordances];
  const seen = new Set<string>();
  return all.filter((a) => {
    const key = a.trim().toLowerCase();
    if (!key || seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** The longest word of `text` as the tokenizer sees it (accents folded, a run of letters and digits). */
function longestWord(text: string): string {
  let best = '';
  for (const w of fold(text).match(/[\p{L}\p{N}]+/gu) ?? []) if (w.length > best.length) best = w;
  return best;
}

function round(n: number): number {
  return Math.round(n * 10_000) / 10_000;
}
