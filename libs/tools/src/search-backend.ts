import { ToolSearch, type SearchCategory, type SearchHit } from './search';
import type { DomainCatalog } from './tools.types';

/** One ranked tool or skill name from a {@link ToolSearchBackend}. */
export interface SearchMatch {
  name: string;
  /** Higher is better; null when the backend has no comparable score. */
  score: number | null;
}

/** What a {@link ToolSearchBackend} answers: tool and skill names, best first. */
export interface SearchMatches {
  tools: SearchMatch[];
  skills: SearchMatch[];
}

/**
 * Ranks a server's tools and skills for `search_{name}_tools` (BM25 by default; a vector database or
 * Elasticsearch in an embedding). Stoa validates the query first, then turns the names it returns into the
 * reference's hits (unknown names are dropped, at most `top` per category are kept).
 */
export interface ToolSearchBackend {
  /** Called once at start with the server's catalog (tools, skills, states); search waits for it. */
  index(catalog: DomainCatalog): void | Promise<void>;
  /** Names of the best tools and skills for `query`; `category` says which lists the caller wants. */
  search(query: string, top: number, category: SearchCategory): SearchMatches | Promise<SearchMatches>;
}

/** Injection token of an executor's {@link ToolSearchBackend} (absent → the built-in BM25). */
export const TOOL_SEARCH_BACKEND = Symbol('TOOL_SEARCH_BACKEND');

/** The built-in BM25 ranking as a {@link ToolSearchBackend} (what an executor uses when none is given). */
export class Bm25SearchBackend implements ToolSearchBackend {
  private bm25?: ToolSearch;

  index(catalog: DomainCatalog): void {
    this.bm25 = new ToolSearch(catalog, '', '');
  }

  search(query: string, top: number, category: SearchCategory): SearchMatches {
    const hits = this.bm25?.search(query, top, category) ?? { tools: [], skills: [] };
    const names = (list: SearchHit[]) => list.map((h) => ({ name: h.name, score: h.score }));
    return { tools: names(hits.tools), skills: names(hits.skills) };
  }
}
