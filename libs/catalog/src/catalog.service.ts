import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { InvalidInputError, Mutex, UnavailableError } from '@stoa/core';
import type { BlobAccessConfig } from './catalog.config';
import { ArtifactNotFoundError, CatalogQueryRefusedError } from './catalog.errors';
import { BlobClients } from './catalog-blob';
import { enumerateSources } from './catalog-indexer';
import { ARTIFACTS, isPostgres, qualified } from './catalog.migrations';
import { CatalogRepository } from './catalog.repository';
import {
  type CatalogArtifact,
  type CatalogSearchHit,
  type CatalogSearchOptions,
  type CatalogSettings,
  SourceType,
} from './catalog.types';
import { PostgresReadOnlyQuery } from './postgres-query';
import { type QueryRow, SqliteReadOnlyQuery } from './sqlite-query';

export const CATALOG_SETTINGS = Symbol('CATALOG_SETTINGS');

/** Statements refused before they reach the database (reference wording and list). */
const WRITE_KEYWORDS = ['INSERT', 'UPDATE', 'DELETE', 'DROP', 'ALTER', 'CREATE', 'REPLACE'];
/** Upper bounds of `max_rows` and `top`. */
export const MAX_QUERY_ROWS = 10_000;
export const MAX_SEARCH_TOP = 1000;

/**
 * The data catalog (reference §4.9): indexes local directories and blob containers into `catalog_artifacts`,
 * searches them by full text, and answers read-only SQL over them. Usable without Nest: `new CatalogService(settings,
 * dataSource)` on a DataSource that ran CATALOG_MIGRATIONS, then `await onModuleInit()` (grants, index_on_start).
 */
@Injectable()
export class CatalogService implements OnModuleInit {
  private readonly logger = new Logger(CatalogService.name);
  private readonly repo: CatalogRepository;
  private readonly blobs: BlobClients;
  private readonly indexing = new Mutex();
  private readonly reader?: { run(sql: string, maxRows: number): Promise<QueryRow[]> };
  private readonly readerMissing?: string;

  constructor(
    @Inject(CATALOG_SETTINGS) private readonly settings: CatalogSettings,
    private readonly ds: DataSource,
  ) {
    this.repo = new CatalogRepository(ds);
    this.blobs = new BlobClients(settings.blob);
    const file = (ds.options as { database?: unknown }).database;
    if (isPostgres(ds)) {
      if (settings.queryRole) this.reader = new PostgresReadOnlyQuery(ds, settings.queryRole, settings.queryTimeoutMs);
      else this.readerMissing = 'on PostgreSQL it needs catalog.query_role (a role granted SELECT on the catalog only)';
    } else if (typeof file === 'string' && file !== ':memory:' && file !== '') {
      this.reader = new SqliteReadOnlyQuery(file, settings.queryTimeoutMs);
    } else {
      this.readerMissing = 'it needs a file database';
    }
  }

  /** Grants the query role its access, then indexes the sources (index_on_start); failures are logged, not thrown. */
  async onModuleInit(): Promise<void> {
    await this.grantQueryRole();
    if (this.readerMissing) this.logger.warn({ reason: this.readerMissing }, 'query_catalog is disabled');
    if (!this.settings.indexOnStart) return;
    try {
      await this.index();
    } catch (err) {
      this.logger.error(
        { err: (err as Error).message },
        'catalog indexing failed; search shows what was indexed before',
      );
    }
  }

  /** Whether query_catalog can run here (PostgreSQL needs `query_role`). */
  get queryEnabled(): boolean {
    return this.reader !== undefined;
  }

  /** Absolute local source paths (directories, or single files): the roots `<local>` asset tags may read. */
  localRoots(): string[] {
    return this.settings.sources.flatMap((s) => (s.type === SourceType.local ? [s.path] : []));
  }

  /** How blob sources are reached (`catalog.blob`), for fetching `<blob>` artifacts; undefined when not configured. */
  blobAccess(): BlobAccessConfig | undefined {
    return this.settings.blob;
  }

  /**
   * Lists every source and brings the table in line: new files are added, vanished ones removed, known ones left as
   * they are (reference). Sources that could not be listed keep their rows. Returns how many artifacts were added.
   */
  async index(): Promise<number> {
    return this.indexing.runExclusive(async () => {
      const started = Date.now();
      const { artifacts, unlisted } = await enumerateSources(
        this.settings.sources,
        this.blobs,
        new Date().toISOString(),
        this.logger,
      );
      const known = new Set(await this.repo.listUris());
      const found = new Map(artifacts.map((a) => [a.storage_uri, a] as const).reverse()); // overlapping sources: first wins
      const stale = [...known].filter((uri) => !found.has(uri) && !unlisted.some((prefix) => uri.startsWith(prefix)));
      const fresh = [...found.values()].filter((a) => !known.has(a.storage_uri));
      const { added, removed } = await this.repo.apply(fresh, stale);
      await this.repo.rebuildSearchIndex();
      const undescribed = artifacts.filter((a) => !a.description);
      if (undescribed.length) {
        this.logger.warn(
          { count: undescribed.length, examples: undescribed.slice(0, 5).map((a) => a.storage_uri) },
          'catalog artifacts without a description: agents can find them by name only; add descriptions in catalog.yaml',
        );
      }
      this.logger.log({ files: artifacts.length, added, removed, ms: Date.now() - started }, 'catalog indexed');
      return added;
    });
  }

  /**
   * Full-text search over name, description and domain, best first; `score` is 1 for the best hit. When nothing
   * matches (or the query is blank) the artifacts matching the filters are listed by name, without a score.
   */
  async search(query: string, opts: CatalogSearchOptions = {}): Promise<CatalogSearchHit[]> {
    const top = opts.top ?? 10;
    if (!Number.isInteger(top) || top < 1 || top > MAX_SEARCH_TOP)
      throw new InvalidInputError(`top must be a whole number from 1 to ${MAX_SEARCH_TOP}.`);
    const filters = { domain: opts.domain ?? null, source_type: opts.source_type ?? null };
    const hits = await this.repo.search(query, filters, top);
    const best = hits[0]?.rank ?? 0;
    if (hits.length)
      return hits.map((h) => ({ ...h.artifact, score: best > 0 ? Math.round((h.rank / best) * 10_000) / 10_000 : 1 }));
    return (await this.repo.list(filters, top)).map((a) => ({ ...a, score: null }));
  }

  /** The artifact with this id, if indexed. */
  async find(id: string): Promise<CatalogArtifact | undefined> {
    return this.repo.find(id.trim());
  }

  /** The artifact with this id; throws ArtifactNotFoundError. */
  async get(id: string): Promise<CatalogArtifact> {
    const found = await this.find(id);
    if (!found) throw new ArtifactNotFoundError(id);
    return found;
  }

  /** Distinct domains, sorted. */
  async listDomains(): Promise<string[]> {
    return this.repo.listDomains();
  }

  /**
   * Runs one read-only SQL query over the catalog and returns at most `maxRows` rows. Statements starting with a
   * write keyword are refused up front (reference); everything else runs on a read-only connection (SQLite) or in a
   * READ ONLY transaction as the query role (PostgreSQL), limited to the catalog tables and to the query timeout.
   */
  async query(sql: string, maxRows = 100): Promise<QueryRow[]> {
    if (!Number.isInteger(maxRows) || maxRows < 1 || maxRows > MAX_QUERY_ROWS) {
      throw new InvalidInputError(`max_rows must be a whole number from 1 to ${MAX_QUERY_ROWS}.`);
    }
    const head = sql.trim().toUpperCase();
    const keyword = WRITE_KEYWORDS.find((k) => head.startsWith(k));
    if (keyword)
      throw new CatalogQueryRefusedError(`Write operations are not permitted. Query starts with: ${keyword}`);
    if (!head) throw new InvalidInputError('sql is empty: pass one SELECT statement.');
    if (!this.reader)
      throw new UnavailableError(
        `query_catalog is not available on this server: ${this.readerMissing}. Use search_data and get_artifact instead.`,
      );
    return this.reader.run(sql, maxRows);
  }

  /** PostgreSQL: lets the query role read the catalog table (created by our migration, so owned by the server's role). */
  private async grantQueryRole(): Promise<void> {
    const role = this.settings.queryRole;
    if (!isPostgres(this.ds) || !role) return;
    const schema = (this.ds.options as { schema?: string }).schema;
    const grants = [
      ...(schema ? [`GRANT USAGE ON SCHEMA "${schema.replace(/"/g, '')}" TO "${role}"`] : []),
      `GRANT SELECT ON ${qualified(this.ds, ARTIFACTS)} TO "${role}"`,
    ];
    for (const sql of grants) {
      await this.ds
        .query(sql)
        .catch((err: Error) =>
          this.logger.error(
            { role, sql, err: err.message },
            'granting the catalog query role failed; query_catalog may be refused',
          ),
        );
    }
  }
}
