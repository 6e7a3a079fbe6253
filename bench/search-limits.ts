/**
 * search-limits: what one `search_<server>_tools` call can cost. Times `ToolSearch.answer` (the tool's handler
 * without MCP) on the science catalog for oversized queries, the worst query the default limits accept, and a
 * short agent query as the same-run baseline. Before the limits, a 32k-character word stalled the process
 * 10.8 s (fuzzy matching allocated a length² matrix, and the identifier regex backtracked quadratically).
 *
 * stdout: p50/p99 per subject, each with `ratio` to `short-query`; `goal_max` (50) on the p99 lines of the queries
 * of 32k characters and more applies to `value` (ms). stderr: what each subject answered (refused with which limit, or how many hits).
 */
import { join } from 'node:path';
import {
  type DomainCatalog,
  loadDomain,
  searchConfigSchema,
  skillsConfigSchema,
  ToolSearch,
  toolsConfigSchema,
} from '@stoa/tools';
import { ToolFailure } from '@stoa/mcp';
import { ROOT } from '../test/support/paths';
import { emit, note, percentile, runBench } from './lib/bench';

const BENCH = 'search-limits';
const WARMUP = 20;
const ROUNDS = 200;
const GOAL_P99_MS = 50;

function catalog(server: string, as = server): DomainCatalog {
  const dir = join(ROOT, 'examples', 'servers', server);
  return {
    ...loadDomain(
      as,
      toolsConfigSchema.parse({ manifest: 'tools.yaml' }),
      skillsConfigSchema.parse({ dir: 'skills' }),
      dir,
    ).catalog,
    serverName: as,
  };
}

/** `n` characters of distinct 7-letter words: each is looked up exactly, as a prefix and fuzzily (the costliest kind). */
function fuzzyWords(n: number): string {
  const words: string[] = [];
  for (let i = 0; words.join(' ').length < n; i++)
    words.push(`optim${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + (Math.floor(i / 26) % 26))}`);
  return words.join(' ').slice(0, n).trim();
}

const prose = (n: number): string =>
  'find the shortest path between two nodes in a weighted graph and summarise the result '
    .repeat(Math.ceil(n / 86))
    .slice(0, n);

interface Subject {
  name: string;
  search: ToolSearch;
  query: string;
}

function main(): Promise<void> {
  const science = catalog('science');
  const routerSized = Array.from({ length: 10 }, (_, i) => [
    catalog('science', `science${i}`),
    catalog('demo', `demo${i}`),
  ]).flat();
  const limits = searchConfigSchema.parse(undefined);
  const bounded = new ToolSearch(science, 'execute_science_code', 'load_science_skill');
  const raised = new ToolSearch(science, 'execute_science_code', 'load_science_skill', {
    max_query_chars: 1 << 21,
    max_term_chars: 1 << 21,
  });
  const router = new ToolSearch(routerSized, (s) => `execute_${s}_code`, 'load_router_skill');
  const subjects: Subject[] = [
    { name: 'short-query', search: bounded, query: 'shortest path in a weighted graph' },
    { name: 'query-32k-one-word', search: bounded, query: 'q'.repeat(32_768) },
    { name: 'query-32k-prose', search: bounded, query: prose(32_768) },
    { name: 'query-1m-one-word', search: bounded, query: 'q'.repeat(1_048_576) },
    { name: 'max-query-worst', search: bounded, query: fuzzyWords(limits.max_query_chars) },
    { name: 'max-query-worst-router-20-catalogs', search: router, query: fuzzyWords(limits.max_query_chars) },
    { name: 'query-32k-one-word-limits-raised', search: raised, query: 'q'.repeat(32_768) },
  ];
  for (const s of subjects) {
    const out = s.search.answer({ query: s.query, top: 5, category: 'all' }, 'none');
    note(
      `${s.name} (${s.query.length} chars): ${out instanceof ToolFailure ? `refused: ${String(out.body.error)}` : `${(out.tools as unknown[]).length} tools, ${(out.skills as unknown[]).length} skills`}`,
    );
  }
  const samples = new Map(subjects.map((s) => [s.name, [] as number[]]));
  for (let round = 0; round < WARMUP + ROUNDS; round++) {
    // Rotate the order each round so machine load falls on every subject alike.
    for (let k = 0; k < subjects.length; k++) {
      const s = subjects[(round + k) % subjects.length] as Subject;
      const t0 = performance.now();
      s.search.answer({ query: s.query, top: 5, category: 'all' }, 'none');
      if (round >= WARMUP) samples.get(s.name)?.push(performance.now() - t0);
    }
  }
  const base = samples.get('short-query') as number[];
  for (const s of subjects) {
    const mine = samples.get(s.name) as number[];
    for (const [metric, p] of [
      ['p50_ms', 50],
      ['p99_ms', 99],
    ] as const) {
      const value = percentile(mine, p);
      const line: Record<string, unknown> = {
        bench: BENCH,
        subject: s.name,
        metric,
        value: Number(value.toFixed(3)),
        n: mine.length,
        query_chars: s.query.length,
      };
      if (s.name !== 'short-query')
        Object.assign(line, { baseline: 'short-query', ratio: Number((value / percentile(base, p)).toFixed(2)) });
      if (metric === 'p99_ms' && s.query.length >= 32_768) line.goal_max = GOAL_P99_MS;
      emit(line);
    }
  }
  return Promise.resolve();
}

runBench(BENCH, main);
