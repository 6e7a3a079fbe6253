/**
 * Scratch copy of libs/tools/src/search.ts's tool index (MiniSearch BM25, same fields, boosts and
 * options), with switches for candidate changes, so `search-recall --variants` can measure them
 * without touching libs/. With every switch off it ranks exactly like `ToolSearch` (the bench checks
 * that). Only tool ranking is copied; skills, hits and the empty query are not.
 */
import MiniSearch from 'minisearch';
import { stemmer } from 'stemmer';
import { type DomainCatalog, STOP_WORDS, toolAffordances } from '@stoa/tools';

export interface Variant {
  /** NFKD + strip combining marks before tokenising, and keep non-ASCII letters (`Erdős–Rényi` → erdos, renyi). */
  foldDiacritics?: boolean;
  /** Also drop a term whose *stem* is a stop word (`its` → it, `one`/`ones` → on), and 1-char terms (`x` in `f(x)`). */
  stopAfterStem?: boolean;
  /** Index parameter and return names + descriptions (and string defaults) as a `signature` field with this boost. */
  signatureBoost?: number;
  /** Override the name boost (search.ts: 2). */
  nameBoost?: number;
  /** Override the affordances boost (search.ts: 1.5). */
  affordanceBoost?: number;
  /** Count each distinct query term once (search.ts: `row by row` counts `row` twice). */
  dedupeQuery?: boolean;
}

const fold = (s: string): string => s.normalize('NFKD').replace(/\p{M}+/gu, '');

interface Doc {
  id: number;
  name: string;
  description: string;
  affordances: string;
  signature: string;
}

export function variantRanker(catalog: DomainCatalog, v: Variant, top: number): (query: string) => string[] {
  const tokenize = (text: string): string[] => {
    const lower = v.foldDiacritics ? fold(text).toLowerCase() : text.toLowerCase();
    const word = v.foldDiacritics ? /[\p{L}\p{N}]+/gu : /[a-z0-9]+/g;
    const ident = v.foldDiacritics ? /[\p{L}\p{N}]+(?:_[\p{L}\p{N}]+)+/gu : /[a-z0-9]+(?:_[a-z0-9]+)+/g;
    const words = lower.match(word) ?? [];
    const idents = (lower.match(ident) ?? []).map((w) => w.replace(/_/g, ''));
    return [...words, ...idents];
  };
  const processTerm = (term: string): string | null => {
    if (STOP_WORDS.has(term)) return null;
    const s = stemmer(term);
    if (v.stopAfterStem && (STOP_WORDS.has(s) || term.length < 2)) return null;
    return s;
  };
  const fields = ['name', 'description', 'affordances', ...(v.signatureBoost ? ['signature'] : [])];
  const boost: Record<string, number> = { name: v.nameBoost ?? 2, affordances: v.affordanceBoost ?? 1.5 };
  if (v.signatureBoost) boost.signature = v.signatureBoost;
  const index = new MiniSearch<Doc>({
    fields,
    tokenize,
    processTerm,
    searchOptions: {
      boost,
      bm25: { k: 1.5, b: 0.75, d: 0.5 },
      prefix: (t: string, i: number) => i < 24 && t.length >= 5,
      fuzzy: (t: string, i: number) => (i < 24 && t.length >= 7 && t.length <= 32 ? 0.15 : false),
      maxFuzzy: 3,
    },
  });
  index.addAll(
    catalog.tools.map((t) => ({
      id: t.id,
      name: t.name,
      description: t.description,
      affordances: toolAffordances(t, catalog.states).join(' . '),
      signature: [
        ...t.parameters.map((p) => `${p.name} ${p.description}${typeof p.default === 'string' ? ` ${p.default}` : ''}`),
        ...t.returns.map((r) => `${r.name} ${r.description}`),
      ].join(' . '),
    })),
  );
  return (query) => {
    const q = v.dedupeQuery ? [...new Set(tokenize(query))].join(' ') : query;
    return index
      .search(q, { combineWith: 'OR' })
      .filter((h) => h.score > 0)
      .slice(0, top)
      .map((h) => (catalog.tools[h.id as number] as { name: string }).name);
  };
}

/** The candidates `search-recall --variants` measures, each alone and then together. */
export const VARIANTS: Record<string, Variant> = {
  'copy-of-search.ts': { foldDiacritics: true, stopAfterStem: true, signatureBoost: 0.5 },
  'fold-diacritics': { foldDiacritics: true },
  'stop-after-stem': { stopAfterStem: true },
  'dedupe-query': { dedupeQuery: true },
  'signature-0.5': { signatureBoost: 0.5 },
  'signature-1': { signatureBoost: 1 },
  'name-boost-1': { nameBoost: 1 },
  'fold+stop+signature-0.5': { foldDiacritics: true, stopAfterStem: true, signatureBoost: 0.5 },
  'fold+stop+signature-0.5+name-1': { foldDiacritics: true, stopAfterStem: true, signatureBoost: 0.5, nameBoost: 1 },
};
