import { Logger } from '@nestjs/common';
import { z } from 'zod';
import { isAppError } from '@stoa/core';
import { defineTool, integer, ToolFailure, type ToolDefinition } from '@stoa/mcp';
import type { CatalogService } from './catalog.service';
import { MAX_QUERY_ROWS, MAX_SEARCH_TOP } from './catalog.service';
import { type CatalogArtifact, SourceType } from './catalog.types';

/**
 * `<local>{storage_uri}</local>` for local files; `<blob>{id}</blob>` for blobs, which the executor resolves through
 * this catalog (the reference wrapped blob URIs in `<local>` too).
 */
function loadPath(a: Pick<CatalogArtifact, 'id' | 'source_type' | 'storage_uri'>): string {
  return a.source_type === SourceType.blob ? `<blob>${a.id}</blob>` : `<local>${a.storage_uri}</local>`;
}

/** An artifact as the tools return it: null fields left out, `load_path` added. */
function view(a: CatalogArtifact & { score?: number | null }): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(a)) if (v !== null && v !== undefined) out[k] = v;
  out.load_path = loadPath(a);
  return out;
}

/** Our own errors become the reference's `{"error": …}` result (flagged isError); anything else is a server fault. */
async function orError<T>(work: () => Promise<T>): Promise<T | ToolFailure> {
  try {
    return await work();
  } catch (err) {
    if (isAppError(err)) return new ToolFailure({ error: err.message });
    throw err;
  }
}

const logger = new Logger('CatalogTools');

/**
 * The four catalog tools (reference §1.10), with fixed names. `executeTool` names the code tool in descriptions.
 * query_catalog is left out where the service cannot run it (PostgreSQL without `catalog.query_role`).
 */
export function catalogTools(catalog: CatalogService, opts: { executeTool?: string } = {}): ToolDefinition[] {
  const run = opts.executeTool ? `code you run with ${opts.executeTool}` : 'code you run on this server';
  const tools: ToolDefinition[] = [
    defineTool({
      name: 'search_data',
      description:
        'Search the data catalog of this server — the datasets (files and blobs) its operators registered — by words in their name, description and domain. ' +
        'All words must match; "quoted phrase", `or` between alternatives and -word to exclude work too. Returns up to `top` artifacts, best first, ' +
        `each with id, name, description, domain, content_type, size_bytes, score (1 = best match) and load_path. To use one, put its load_path string as a literal in ${run} ` +
        '(e.g. pd.read_csv("<local>/data/x.csv</local>")): the server swaps in the path of a local copy. ' +
        'If nothing matches you get the catalog listed by name without a score: broaden the query, or call list_domains and filter by domain.',
      input: z.object({
        query: z
          .string()
          .max(1000)
          .describe('Words to look for, e.g. "solar capacity germany"; empty lists the catalog by name'),
        domain: z.string().nullable().default(null).describe('Only artifacts of this domain (see list_domains)'),
        source_type: z
          .enum([SourceType.local, SourceType.blob])
          .nullable()
          .default(null)
          .describe("Only 'local' files or 'blob' storage"),
        top: integer().min(1).max(MAX_SEARCH_TOP).default(10).describe('Most results to return'),
      }),
      annotations: { readOnlyHint: true, openWorldHint: false },
      handler: async ({ query, domain, source_type, top }, ctx) => {
        const hits = (await catalog.search(query, { domain, source_type, top })).map(view);
        // The reference's `data_searched` activity event (§9.2), as a structured log line.
        logger.log(
          { type: 'data_searched', query, matched_artifacts: hits.length, principal: ctx.principal.id },
          `search data '${query}' → ${hits.length} dataset(s)`,
        );
        return hits;
      },
    }),
    defineTool({
      name: 'get_artifact',
      description: `Full metadata of one catalog artifact by its id (from search_data), with the load_path to use in ${run}.`,
      input: z.object({ artifact_id: z.string().min(1).max(100).describe("The 'id' of a search_data hit") }),
      annotations: { readOnlyHint: true, openWorldHint: false },
      handler: ({ artifact_id }) => orError(async () => view(await catalog.get(artifact_id))),
    }),
    defineTool({
      name: 'list_domains',
      description:
        'The domains (subject areas) of the data catalog, sorted. Pass one as `domain` to search_data to see only its artifacts.',
      input: z.object({}),
      annotations: { readOnlyHint: true, openWorldHint: false },
      handler: () => catalog.listDomains(),
    }),
  ];
  if (catalog.queryEnabled) {
    tools.push(
      defineTool({
        name: 'query_catalog',
        description:
          'Run one read-only SQL query over the catalog table catalog_artifacts(id, name, storage_uri, description, domain, source_type, content_type, ' +
          'size_bytes, indexed_at) for counts, sizes and listings search_data cannot give, e.g. ' +
          'SELECT domain, count(*), sum(size_bytes) FROM catalog_artifacts GROUP BY domain. Returns a list of rows (at most max_rows), or {error} when the ' +
          'query is refused (writes, other tables) or fails. Use search_data to find artifacts by topic.',
        input: z.object({
          sql: z.string().max(20_000).describe('One SELECT statement'),
          max_rows: integer().min(1).max(MAX_QUERY_ROWS).default(100).describe('Most rows to return'),
        }),
        annotations: { readOnlyHint: true, openWorldHint: false },
        handler: ({ sql, max_rows }) => orError(() => catalog.query(sql, max_rows)),
      }),
    );
  }
  return tools;
}
