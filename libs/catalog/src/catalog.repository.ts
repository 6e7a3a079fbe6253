import type { DataSource, QueryResult, QueryRunner } from 'typeorm';
import { ARTIFACTS, ARTIFACTS_FTS, isPostgres, qualified } from './catalog.migrations';
import type { CatalogArtifact, SourceType } from './catalog.types';
import { hasSearchTerms, toFts5Query, toPgWebsearch } from './search-query';

const COLUMNS = [
  'id',
  'name',
  'storage_uri',
  'description',
  'domain',
  'source_type',
  'content_type',
  'size_bytes',
  'indexed_at',
] as const;
const SELECT = COLUMNS.map((c) => `a.${c}`).join(', ');
/** Rows per INSERT/DELETE statement (well under both databases' bind-parameter limits). */
const BATCH = 200;

export interface ArtifactFilters {
  domain?: string | null;
  source_type?: SourceType | null;
}

interface Row {
  id: string;
  name: string;
  storage_uri: string;
  description: string | null;
  domain: string | null;
  source_type: string;
  content_type: string | null;
  /** PostgreSQL returns bigint as a string. */
  size_bytes: string | number | null;
  indexed_at: string;
  rank?: string | number;
}

/** The only code touching the catalog tables: plain SQL, because full-text search differs per database. */
export class CatalogRepository {
  private readonly pg: boolean;
  private readonly table: string;

  constructor(private readonly ds: DataSource) {
    this.pg = isPostgres(ds);
    this.table = qualified(ds, ARTIFACTS);
  }

  /** Storage URIs of every indexed artifact. */
  async listUris(): Promise<string[]> {
    const rows = await this.ds.query<{ storage_uri: string }[]>(`SELECT storage_uri FROM ${this.table}`);
    return rows.map((r) => r.storage_uri);
  }

  /** Inserts artifacts whose id is not indexed yet and deletes `stale` URIs, in one transaction; returns how many were added. */
  async apply(
    added: readonly CatalogArtifact[],
    stale: readonly string[],
  ): Promise<{ added: number; removed: number }> {
    return this.ds.transaction(async (em) => {
      const qr = em.queryRunner as QueryRunner;
      let removed = 0;
      for (let i = 0; i < stale.length; i += BATCH) {
        const uris = stale.slice(i, i + BATCH);
        removed += await this.count(
          qr,
          `DELETE FROM ${this.table} WHERE storage_uri IN (${this.params(1, uris.length)}) RETURNING id`,
          uris,
        );
      }
      let inserted = 0;
      for (let i = 0; i < added.length; i += BATCH) {
        const batch = added.slice(i, i + BATCH);
        const values = batch.map((_, r) => `(${this.params(r * COLUMNS.length + 1, COLUMNS.length)})`).join(', ');
        // Another replica may index the same files at the same moment: its rows win, ours are skipped.
        const sql = `INSERT INTO ${this.table} (${COLUMNS.join(', ')}) VALUES ${values} ON CONFLICT DO NOTHING RETURNING id`;
        inserted += await this.count(
          qr,
          sql,
          batch.flatMap((a) => COLUMNS.map((c) => a[c])),
        );
      }
      return { added: inserted, removed };
    });
  }

  /**
   * Re-reads the FTS5 index from the artifacts table (SQLite). The external-content index is keyed by rowid, which
   * a VACUUM may renumber in a table without an INTEGER PRIMARY KEY; rebuilding at each indexing run heals that.
   */
  async rebuildSearchIndex(): Promise<void> {
    if (!this.pg) await this.ds.query(`INSERT INTO ${ARTIFACTS_FTS}(${ARTIFACTS_FTS}) VALUES ('rebuild')`);
  }

  async find(id: string): Promise<CatalogArtifact | undefined> {
    const rows = await this.ds.query<Row[]>(`SELECT ${SELECT} FROM ${this.table} a WHERE a.id = ${this.params(1, 1)}`, [
      id,
    ]);
    return rows[0] ? artifact(rows[0]) : undefined;
  }

  /** Distinct non-null domains, sorted. */
  async listDomains(): Promise<string[]> {
    const rows = await this.ds.query<{ domain: string }[]>(
      `SELECT DISTINCT domain FROM ${this.table} WHERE domain IS NOT NULL ORDER BY domain`,
    );
    return rows.map((r) => r.domain);
  }

  /** Full-text hits, best first, each with its raw rank (higher is better); [] when the text has nothing to search. */
  async search(
    text: string,
    filters: ArtifactFilters,
    top: number,
  ): Promise<{ artifact: CatalogArtifact; rank: number }[]> {
    if (!hasSearchTerms(text)) return [];
    const rows = this.pg ? await this.searchPostgres(text, filters, top) : await this.searchSqlite(text, filters, top);
    return rows.map((r) => ({ artifact: artifact(r), rank: Number(r.rank) }));
  }

  /** Artifacts matching the filters, by name. */
  async list(filters: ArtifactFilters, top: number): Promise<CatalogArtifact[]> {
    const { where, params } = this.filters(filters, 1);
    const rows = await this.ds.query<Row[]>(
      `SELECT ${SELECT} FROM ${this.table} a WHERE 1 = 1${where} ORDER BY a.name, a.id LIMIT ${this.params(params.length + 1, 1)}`,
      [...params, top],
    );
    return rows.map(artifact);
  }

  private async searchSqlite(text: string, filters: ArtifactFilters, top: number): Promise<Row[]> {
    const { where, params } = this.filters(filters, 2);
    // bm25() is negative, more negative = better: negate it so callers see "higher is better" on both databases.
    return this.ds.query<Row[]>(
      `SELECT ${SELECT}, -bm25(${ARTIFACTS_FTS}) AS rank FROM ${ARTIFACTS_FTS} JOIN ${this.table} a ON a.rowid = ${ARTIFACTS_FTS}.rowid
       WHERE ${ARTIFACTS_FTS} MATCH ?${where} ORDER BY bm25(${ARTIFACTS_FTS}), a.name LIMIT ?`,
      [toFts5Query(text), ...params, top],
    );
  }

  private async searchPostgres(text: string, filters: ArtifactFilters, top: number): Promise<Row[]> {
    const { where, params } = this.filters(filters, 2);
    const n = params.length + 2;
    return this.ds.query<Row[]>(
      `SELECT ${SELECT}, ts_rank_cd(a.search_vector, q) AS rank FROM ${this.table} a, websearch_to_tsquery('simple', $1) q
       WHERE a.search_vector @@ q${where} ORDER BY rank DESC, a.name LIMIT $${n}`,
      [toPgWebsearch(text), ...params, top],
    );
  }

  private filters(f: ArtifactFilters, first: number): { where: string; params: unknown[] } {
    const params: unknown[] = [];
    let where = '';
    if (f.domain != null) where += ` AND a.domain = ${this.params(first + params.push(f.domain) - 1, 1)}`;
    if (f.source_type != null)
      where += ` AND a.source_type = ${this.params(first + params.push(f.source_type) - 1, 1)}`;
    return { where, params };
  }

  /** `n` placeholders starting at position `from` (1-based): `?` on SQLite, `$k` on PostgreSQL. */
  private params(from: number, n: number): string {
    return Array.from({ length: n }, (_, i) => (this.pg ? `$${from + i}` : '?')).join(', ');
  }

  private async count(qr: QueryRunner, sql: string, params: unknown[]): Promise<number> {
    const res: QueryResult = await qr.query(sql, params, true);
    return Array.isArray(res.records) ? res.records.length : 0;
  }
}

function artifact(r: Row): CatalogArtifact {
  return {
    id: r.id,
    name: r.name,
    storage_uri: r.storage_uri,
    description: r.description,
    domain: r.domain,
    source_type: r.source_type as SourceType,
    content_type: r.content_type,
    size_bytes: r.size_bytes === null ? null : Number(r.size_bytes),
    indexed_at: r.indexed_at,
  };
}
