import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CatalogQueryError,
  CatalogQueryRefusedError,
  CatalogService,
  catalogTools,
  type CatalogSettings,
} from '@stoa/catalog';
import { InvalidInputError, UnavailableError } from '@stoa/core';
import { dbTarget, postgresAvailable, TEST_PG_URL } from '../../../test/support/databases';
import { callTool, openCatalogDb, settings, tree } from './catalog-fixture';

const pg = postgresAvailable();
const targets = (['sqlite', 'postgres'] as const).filter((t) => t === 'sqlite' || pg);

const dir = tree({ 'a.csv': '1\n', 'b.csv': '22\n', 'c.json': '{}', 'd.txt': 'dddd' });
const catalogSettings = (over: Partial<CatalogSettings> = {}): CatalogSettings =>
  settings([{ type: 'local', path: dir, domain: 'test', files: { 'c.json': { domain: 'json' } } }], over);

/** The error a rejected promise carries. */
const failure = (p: Promise<unknown>): Promise<unknown> =>
  p.then(
    () => new Error('expected a failure'),
    (e: unknown) => e,
  );

describe.each(targets)('query_catalog on %s', (kind) => {
  const db = dbTarget(kind);
  // PostgreSQL: query_catalog runs as a role that may read the catalog only (the server grants it at start).
  const role = `stoa_catalog_${randomBytes(4).toString('hex')}`;
  let ds: DataSource;
  let catalog: CatalogService;

  const table = kind === 'postgres' ? `"${db.database.schema}".catalog_artifacts` : 'catalog_artifacts';
  const count = async (): Promise<number> =>
    Number((await ds.query<{ n: number | string }[]>(`SELECT count(*) AS n FROM ${table}`))[0]?.n);

  beforeAll(async () => {
    ds = await openCatalogDb(db);
    if (kind === 'postgres') await ds.query(`CREATE ROLE ${role} NOLOGIN; GRANT ${role} TO CURRENT_USER`);
    catalog = new CatalogService(catalogSettings({ queryRole: kind === 'postgres' ? role : undefined }), ds);
    await catalog.onModuleInit();
    await catalog.index();
    // Another lib's table in the same database: other users' data query_catalog must never show.
    const other = kind === 'postgres' ? `"${db.database.schema}".other_secrets` : 'other_secrets';
    await ds.query(`CREATE TABLE ${other} (secret varchar(100))`);
    await ds.query(`INSERT INTO ${other} (secret) VALUES ('top secret')`);
    if (kind === 'sqlite') await ds.query('CREATE VIEW leak AS SELECT secret FROM other_secrets');
    if (kind === 'sqlite') await ds.query("CREATE TABLE catalog_artifacts_secrets AS SELECT 'top secret' AS secret");
    else
      await ds.query(
        `CREATE SEQUENCE "${db.database.schema}".probe_seq; GRANT USAGE, UPDATE ON SEQUENCE "${db.database.schema}".probe_seq TO ${role}`,
      );
  });
  afterAll(async () => {
    await ds?.destroy();
    await db.cleanup();
    if (kind === 'postgres') {
      const admin = await new DataSource({ type: 'postgres', url: TEST_PG_URL }).initialize();
      await admin.query(`DROP ROLE IF EXISTS ${role}`);
      await admin.destroy();
    }
  });

  it('runs a SELECT with filters and aggregation, numbers coming back as numbers', async () => {
    expect(
      await catalog.query(
        "SELECT name, size_bytes FROM catalog_artifacts WHERE content_type = 'text/csv' ORDER BY name",
      ),
    ).toEqual([
      { name: 'a.csv', size_bytes: 2 },
      { name: 'b.csv', size_bytes: 3 },
    ]);
    expect(
      await catalog.query(
        'SELECT domain, count(*) AS n, sum(size_bytes) AS bytes FROM catalog_artifacts GROUP BY domain ORDER BY domain;',
      ),
    ).toEqual([
      { domain: 'json', n: 1, bytes: 2 },
      { domain: 'test', n: 3, bytes: 9 },
    ]);
  });

  it('fetches at most max_rows rows, even from an endless query', async () => {
    expect(await catalog.query('SELECT name FROM catalog_artifacts ORDER BY name', 2)).toEqual([
      { name: 'a.csv' },
      { name: 'b.csv' },
    ]);
    const endless = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c';
    expect(await catalog.query(endless, 3)).toEqual([{ x: 1 }, { x: 2 }, { x: 3 }]);
  });

  it('refuses max_rows outside 1..10000', async () => {
    for (const n of [0, -1, 1.5, 10_001, Number.NaN]) {
      const err = await failure(catalog.query('SELECT 1', n));
      expect(err, String(n)).toBeInstanceOf(InvalidInputError);
      expect((err as Error).message).toBe('max_rows must be a whole number from 1 to 10000.');
    }
  });

  it('refuses statements starting with a write keyword with the reference message', async () => {
    for (const [sql, kw] of [
      ['INSERT INTO catalog_artifacts (id) VALUES (1)', 'INSERT'],
      ['  update catalog_artifacts SET name = 1', 'UPDATE'],
      ['\ndelete from catalog_artifacts', 'DELETE'],
      ['DROP TABLE catalog_artifacts', 'DROP'],
      ['alter table catalog_artifacts add x int', 'ALTER'],
      ['CREATE TABLE x (a int)', 'CREATE'],
      ['REPLACE INTO catalog_artifacts (id) VALUES (1)', 'REPLACE'],
    ]) {
      const err = await failure(catalog.query(sql as string));
      expect(err, sql).toBeInstanceOf(CatalogQueryRefusedError);
      expect((err as Error).message).toBe(`Write operations are not permitted. Query starts with: ${kw}`);
    }
  });

  it('lets the database refuse writes the keyword check cannot see, and nothing changes', async () => {
    const tricks =
      kind === 'sqlite'
        ? [
            'WITH x AS (SELECT 1) DELETE FROM catalog_artifacts RETURNING id',
            "/* hi */ INSERT INTO catalog_artifacts (id, name, storage_uri, source_type, indexed_at) VALUES ('x', 'x', 'x', 'local', 'x') RETURNING id",
            'PRAGMA user_version = 7',
            'PRAGMA journal_mode = DELETE',
            `VACUUM INTO '${join(dir, 'copy.sqlite')}'`,
            `ATTACH '${join(dir, 'other.sqlite')}' AS other`,
            'SELECT 1; DELETE FROM catalog_artifacts',
          ]
        : [
            'WITH d AS (DELETE FROM catalog_artifacts RETURNING id) SELECT * FROM d',
            '/* hi */ DELETE FROM catalog_artifacts',
            'SELECT 1; DELETE FROM catalog_artifacts',
            // the role may advance this sequence, the READ ONLY transaction may not
            "SELECT nextval('probe_seq')",
            'TRUNCATE catalog_artifacts',
          ];
    const before = await count();
    for (const sql of tricks) {
      const err = await failure(catalog.query(sql));
      expect(
        err instanceof CatalogQueryRefusedError || err instanceof CatalogQueryError,
        `${sql}: ${String(err)}`,
      ).toBe(true);
    }
    expect(await count()).toBe(before);
    expect(existsSync(join(dir, 'copy.sqlite'))).toBe(false);
    expect(existsSync(join(dir, 'other.sqlite'))).toBe(false);
    if (kind === 'postgres') {
      // a session-level advisory lock survives a rollback; the pooled connection must not keep it
      expect(await catalog.query('SELECT pg_advisory_lock(424242) IS NULL AS locked')).toEqual([{ locked: false }]);
      expect(await ds.query("SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND objid = 424242")).toEqual([]);
    }
    const readOnly = kind === 'sqlite' ? tricks[0] : "SELECT nextval('probe_seq')";
    expect(((await failure(catalog.query(readOnly as string))) as Error).message).toBe(
      `Write operations are not permitted: the catalog is read-only (${kind === 'sqlite' ? 'attempt to write a readonly database' : 'cannot execute nextval() in a read-only transaction'}).`,
    );
  });

  it("may use the database's full-text search and read the catalog's schema", async () => {
    const fts =
      kind === 'sqlite'
        ? "SELECT name FROM catalog_artifacts_fts WHERE catalog_artifacts_fts MATCH 'json'"
        : "SELECT name FROM catalog_artifacts WHERE search_vector @@ websearch_to_tsquery('simple', 'json')";
    expect(await catalog.query(fts)).toEqual([{ name: 'c.json' }]);
    const schema =
      kind === 'sqlite'
        ? "SELECT name FROM pragma_table_info('catalog_artifacts') WHERE name = 'indexed_at'"
        : "SELECT column_name AS name FROM information_schema.columns WHERE table_name = 'catalog_artifacts' AND column_name = 'indexed_at'";
    expect(await catalog.query(schema)).toEqual([{ name: 'indexed_at' }]);
  });

  it('reads only the catalog tables, never other tables of the same database', async () => {
    const reads =
      kind === 'sqlite'
        ? [
            'SELECT * FROM other_secrets',
            'SELECT a.name, s.secret FROM catalog_artifacts a, other_secrets s',
            'SELECT * FROM leak',
            'SELECT (SELECT secret FROM other_secrets) AS s',
            'SELECT secret FROM catalog_artifacts_secrets',
          ]
        : [
            'SELECT * FROM other_secrets',
            "SELECT query_to_xml('SELECT * FROM other_secrets', true, true, '')",
            'SELECT a.name, s.secret FROM catalog_artifacts a, other_secrets s',
          ];
    for (const sql of reads) {
      const err = await failure(catalog.query(sql));
      expect(err, sql).toBeInstanceOf(CatalogQueryRefusedError);
      expect((err as Error).message, sql).toMatch(
        kind === 'sqlite'
          ? /^query_catalog reads only the catalog \(catalog_artifacts, catalog_artifacts_fts\); '(other_secrets|catalog_artifacts_secrets)' is not part of it\./
          : /^query_catalog reads only the catalog: permission denied for table other_secrets\./,
      );
    }
  });

  it('reports database errors as query failures with a hint at the table', async () => {
    const err = await failure(catalog.query('SELECT nope FROM catalog_artifacts'));
    expect(err).toBeInstanceOf(CatalogQueryError);
    expect((err as Error).message).toMatch(
      /^Query failed: .*nope.*\. query_catalog runs one read-only SELECT over catalog_artifacts\(id, name, storage_uri, description, domain, source_type, content_type, size_bytes, indexed_at\)\.$/,
    );
  });

  it('stops a query at the time limit without blocking the server', async () => {
    const quick = new CatalogService(
      catalogSettings({ queryTimeoutMs: 1000, queryRole: kind === 'postgres' ? role : undefined }),
      ds,
    );
    const slow =
      kind === 'sqlite'
        ? 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c'
        : 'SELECT pg_sleep(30)';
    const started = Date.now();
    const stopped = failure(quick.query(slow));
    // the server keeps answering meanwhile
    expect((await quick.search('a')).length).toBeGreaterThan(0);
    const err = await stopped;
    expect(err).toBeInstanceOf(CatalogQueryError);
    expect((err as Error).message).toBe(
      'Query took longer than 1 s and was stopped. Narrow it (WHERE, LIMIT, fewer joins) and retry.',
    );
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('answers through the query_catalog tool with rows or {error}', async () => {
    const call = callTool(catalogTools(catalog));
    expect(await call('query_catalog', { sql: 'SELECT count(*) AS n FROM catalog_artifacts' })).toEqual([{ n: 4 }]);
    expect(await call('query_catalog', { sql: 'DELETE FROM catalog_artifacts' })).toEqual({
      error: 'Write operations are not permitted. Query starts with: DELETE',
      tool_failure: true,
    });
    expect(
      await call('query_catalog', { sql: 'SELECT name FROM catalog_artifacts ORDER BY name', max_rows: 1 }),
    ).toEqual([{ name: 'a.csv' }]);
  });
});

describe.runIf(pg)('query_catalog on postgres without query_role', () => {
  const db = dbTarget('postgres');
  afterAll(() => db.cleanup());

  it('is disabled: the tool is not offered and the service says why', async () => {
    const ds = await openCatalogDb(db);
    try {
      const catalog = new CatalogService(catalogSettings(), ds);
      expect(catalog.queryEnabled).toBe(false);
      expect(catalogTools(catalog).map((t) => t.name)).not.toContain('query_catalog');
      const err = await failure(catalog.query('SELECT 1'));
      expect(err).toBeInstanceOf(UnavailableError);
      expect((err as Error).message).toMatch(
        /^query_catalog is not available on this server: on PostgreSQL it needs catalog\.query_role/,
      );
    } finally {
      await ds.destroy();
    }
  });
});
