/**
 * search-recall: does the BM25 tool search (`ToolSearch`, what `search_<server>_tools` runs) put the
 * right domain tool in its top results for the way an agent phrases a task?
 *
 * Queries live in bench/data/search-queries.json ({server, query, expected}); they were written from
 * the task side, before running the ranker, and are not tuned to it. For each example catalog
 * (examples/servers/{demo,science}) the bench builds the catalog with `loadDomain` and ranks tools
 * with `search(query, 5, 'tools')`. Same-run baselines: a naive keyword-overlap ranker (how many of
 * the query's distinct lowercased words occur in the tool's name + description), and the same ranker
 * over name + description + affordances (the text BM25 indexes), so field coverage and ranking are
 * told apart.
 *
 * stdout: one JSON line per (ranker, server, metric). stderr: every BM25 miss at @1 and @5 with what
 * came first, which is the part to read.
 *
 * `--variants` also ranks with candidate changes to search.ts, tried on a scratch copy
 * (bench/lib/search-variants.ts), and prints their overall figures (subject `variant:<name>`) and the
 * queries each one gains or loses against the current ranker.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  type DomainCatalog,
  loadDomain,
  skillsConfigSchema,
  toolAffordances,
  ToolSearch,
  toolsConfigSchema,
} from '@stoa/tools';
import { ROOT } from '../test/support/paths';
import { emit, note } from './lib/bench';
import { VARIANTS, variantRanker } from './lib/search-variants';

const BENCH = 'search-recall';
const TOP = 5;
const GOAL_RECALL_AT_5 = 0.9;
const root = ROOT;

interface Query {
  server: string;
  query: string;
  expected: string;
}

/** Returns tool names, best first (at most TOP). */
type Ranker = (query: string) => string[];

export function loadCatalog(server: string): DomainCatalog {
  const dir = join(root, 'examples', 'servers', server);
  return loadDomain(
    server,
    toolsConfigSchema.parse({ manifest: 'tools.yaml' }),
    skillsConfigSchema.parse({ dir: 'skills' }),
    dir,
  ).catalog;
}

const words = (text: string): string[] => text.toLowerCase().match(/[a-z0-9]+/g) ?? [];

/** Naive baseline: distinct query words found among the tool's words; ties keep catalog order. */
function overlapRanker(catalog: DomainCatalog, withAffordances: boolean): Ranker {
  const docs = catalog.tools.map((t) => {
    const text = [
      t.name.replace(/_/g, ' '),
      t.description,
      ...(withAffordances ? toolAffordances(t, catalog.states) : []),
    ].join(' ');
    return { name: t.name, words: new Set(words(text)) };
  });
  return (query) => {
    const q = [...new Set(words(query))];
    return docs
      .map((d, i) => ({ name: d.name, i, score: q.filter((w) => d.words.has(w)).length }))
      .filter((d) => d.score > 0)
      .sort((a, b) => b.score - a.score || a.i - b.i)
      .slice(0, TOP)
      .map((d) => d.name);
  };
}

function bm25Ranker(catalog: DomainCatalog): Ranker {
  const search = new ToolSearch(catalog, `execute_${catalog.serverName}_code`, `load_${catalog.serverName}_skill`);
  return (query) => search.search(query, TOP, 'tools').tools.map((h) => h.name);
}

interface Scores {
  at1: number;
  at5: number;
  mrr: number;
  n: number;
}

function score(queries: Query[], rank: (q: Query) => string[]): Scores {
  let at1 = 0;
  let at5 = 0;
  let mrr = 0;
  for (const q of queries) {
    const pos = rank(q).indexOf(q.expected);
    if (pos === 0) at1++;
    if (pos >= 0 && pos < TOP) {
      at5++;
      mrr += 1 / (pos + 1);
    }
  }
  const n = queries.length;
  return { at1: at1 / n, at5: at5 / n, mrr: mrr / n, n };
}

const r3 = (n: number): number => Number(n.toFixed(3));

function main(): void {
  const queries = JSON.parse(readFileSync(join(root, 'bench', 'data', 'search-queries.json'), 'utf8')) as Query[];
  const servers = [...new Set(queries.map((q) => q.server))];
  const catalogs = new Map(servers.map((s) => [s, loadCatalog(s)]));

  // Coverage check: every expected tool exists, and every tool is asked for.
  for (const [server, catalog] of catalogs) {
    const names = new Set(catalog.tools.map((t) => t.name));
    for (const q of queries.filter((x) => x.server === server)) {
      if (!names.has(q.expected)) throw new Error(`query expects unknown tool ${server}.${q.expected}: ${q.query}`);
    }
    const asked = new Map<string, number>();
    for (const q of queries.filter((x) => x.server === server)) asked.set(q.expected, (asked.get(q.expected) ?? 0) + 1);
    const thin = catalog.tools.filter((t) => (asked.get(t.name) ?? 0) < 2).map((t) => t.name);
    if (thin.length) note(`${server}: tools with fewer than 2 queries: ${thin.join(', ')}`);
    note(`${server}: ${catalog.tools.length} tools, ${queries.filter((x) => x.server === server).length} queries`);
  }

  const rankers: Record<string, (server: string) => Ranker> = {
    bm25: (s) => bm25Ranker(catalogs.get(s) as DomainCatalog),
    'keyword-overlap': (s) => overlapRanker(catalogs.get(s) as DomainCatalog, false),
    'keyword-overlap-all-fields': (s) => overlapRanker(catalogs.get(s) as DomainCatalog, true),
  };
  const built = Object.fromEntries(
    Object.entries(rankers).map(([name, make]) => [name, new Map(servers.map((s) => [s, make(s)]))]),
  );
  const rankFor = (ranker: string) => (q: Query) => (built[ranker]?.get(q.server) as Ranker)(q.query);

  const scopes: [string, Query[]][] = [
    ['all', queries],
    ...servers.map((s): [string, Query[]] => [s, queries.filter((q) => q.server === s)]),
  ];
  for (const [scope, qs] of scopes) {
    const base = score(qs, rankFor('keyword-overlap'));
    const baseAll = score(qs, rankFor('keyword-overlap-all-fields'));
    const bm = score(qs, rankFor('bm25'));
    for (const [metric, key] of [
      ['recall@1', 'at1'],
      ['recall@5', 'at5'],
      ['mrr@5', 'mrr'],
    ] as const) {
      emit({ bench: BENCH, subject: 'keyword-overlap', server: scope, metric, value: r3(base[key]), n: base.n });
      emit({
        bench: BENCH,
        subject: 'keyword-overlap-all-fields',
        server: scope,
        metric,
        value: r3(baseAll[key]),
        n: baseAll.n,
      });
      const line: Record<string, unknown> = {
        bench: BENCH,
        subject: 'bm25',
        server: scope,
        metric,
        value: r3(bm[key]),
        n: bm.n,
        baseline: 'keyword-overlap',
      };
      line.ratio = base[key] > 0 ? r3(bm[key] / base[key]) : null;
      if (metric === 'recall@5') line.goal_min = GOAL_RECALL_AT_5;
      emit(line);
    }
  }

  // Misses: the useful part. @5 misses first (the tool never showed), then @1-only misses.
  const bm = rankFor('bm25');
  const base = rankFor('keyword-overlap');
  const rows = queries.map((q) => ({ q, got: bm(q), naive: base(q) }));
  const miss5 = rows.filter((r) => !r.got.includes(r.q.expected));
  const miss1 = rows.filter((r) => r.got[0] !== r.q.expected && r.got.includes(r.q.expected));
  note(`bm25 misses @5 (${miss5.length}/${queries.length}):`);
  for (const r of miss5)
    note(
      `  MISS@5 ${r.q.server}.${r.q.expected} <- "${r.q.query}"\n           bm25: [${r.got.join(', ') || 'no hits'}]   naive: [${r.naive.join(', ') || 'no hits'}]`,
    );
  note(`bm25 misses @1 only (${miss1.length}/${queries.length}):`);
  for (const r of miss1)
    note(
      `  MISS@1 ${r.q.server}.${r.q.expected} (rank ${r.got.indexOf(r.q.expected) + 1}) <- "${r.q.query}"\n           bm25: [${r.got.join(', ')}]`,
    );
  const naiveOnly = rows.filter((r) => !r.got.includes(r.q.expected) && r.naive.includes(r.q.expected));
  if (naiveOnly.length)
    note(`found @5 by keyword-overlap but not by bm25: ${naiveOnly.map((r) => `"${r.q.query}"`).join('; ')}`);

  if (process.argv.includes('--variants')) variants(queries, catalogs, bm);
}

function variants(queries: Query[], catalogs: Map<string, DomainCatalog>, bm: (q: Query) => string[]): void {
  const current = score(queries, bm);
  for (const [name, v] of Object.entries(VARIANTS)) {
    const rankers = new Map([...catalogs].map(([s, c]) => [s, variantRanker(c, v, TOP)]));
    const rank = (q: Query) => (rankers.get(q.server) as Ranker)(q.query);
    if (name === 'copy-of-search.ts') {
      // The scratch copy must rank exactly like ToolSearch, or the variants measure something else.
      const diff = queries.filter((q) => rank(q).join() !== bm(q).join());
      if (diff.length)
        throw new Error(
          `bench/lib/search-variants.ts no longer matches ToolSearch on: ${diff.map((q) => q.query).join(' | ')}`,
        );
    }
    const s = score(queries, rank);
    for (const [metric, key] of [
      ['recall@1', 'at1'],
      ['recall@5', 'at5'],
      ['mrr@5', 'mrr'],
    ] as const) {
      emit({
        bench: BENCH,
        subject: `variant:${name}`,
        server: 'all',
        metric,
        value: r3(s[key]),
        n: s.n,
        baseline: 'bm25',
        ratio: current[key] > 0 ? r3(s[key] / current[key]) : null,
      });
    }
    const pos = (list: string[], q: Query) => {
      const i = list.indexOf(q.expected);
      return i < 0 ? '-' : String(i + 1);
    };
    const changed = queries
      .map((q) => ({ q, before: pos(bm(q), q), after: pos(rank(q), q) }))
      .filter((c) => c.before !== c.after);
    note(`variant ${name}: ${changed.length ? '' : 'no rank changes'}`);
    for (const c of changed) note(`    ${c.q.server}.${c.q.expected}: rank ${c.before} -> ${c.after}  "${c.q.query}"`);
  }
}

try {
  main();
} catch (err) {
  process.stderr.write(`${BENCH} failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
}
