import type { DataSource, MigrationInterface, QueryRunner } from 'typeorm';
import { createTables } from '@stoa/persistence';

export const ARTIFACTS = 'catalog_artifacts';
export const ARTIFACTS_FTS = 'catalog_artifacts_fts';

/** Whether `ds` is PostgreSQL (everything else the app supports is SQLite). */
export function isPostgres(ds: DataSource): boolean {
  return ds.options.type === 'postgres';
}

/** A catalog table name, schema-qualified on PostgreSQL (TypeORM does not set search_path for raw SQL). */
export function qualified(ds: DataSource, table: string): string {
  const schema = isPostgres(ds) ? (ds.options as { schema?: string }).schema : undefined;
  return schema ? `"${schema.replace(/"/g, '')}"."${table}"` : table;
}

/**
 * The text full-text search sees on PostgreSQL: name, description and domain with ASCII punctuation turned into
 * spaces, so `solar_pv.csv` yields the words solar, pv and csv as SQLite's unicode61 tokenizer does.
 */
export const PG_SEARCH_TEXT = `translate(coalesce(name, '') || ' ' || coalesce(description, '') || ' ' || coalesce(domain, ''), '!"#$%&''()*+,-./:;<=>?@[\\]^_\`{|}~', repeat(' ', 32))`;

/** Creates `catalog_artifacts` and its full-text index (FTS5 on SQLite, tsvector + GIN on PostgreSQL). */
export class CreateCatalog1765000000000 implements MigrationInterface {
  name = 'CreateCatalog1765000000000';

  async up(q: QueryRunner): Promise<void> {
    await createTables(q, {
      [ARTIFACTS]: {
        columns: {
          id: 'varchar(16) primary',
          name: 'varchar',
          storage_uri: 'varchar unique not null',
          description: 'text null',
          domain: 'varchar null',
          source_type: 'varchar(10)',
          content_type: 'varchar null',
          size_bytes: 'bigint null',
          indexed_at: 'varchar(32) not null',
        },
        indices: { idx_catalog_artifacts_domain: ['domain'] },
      },
    });
    if (isPostgres(q.connection)) await this.postgresSearch(q);
    else await this.sqliteSearch(q);
  }

  private async postgresSearch(q: QueryRunner): Promise<void> {
    const t = qualified(q.connection, ARTIFACTS);
    await q.query(
      `ALTER TABLE ${t} ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (to_tsvector('simple', ${PG_SEARCH_TEXT})) STORED`,
    );
    await q.query(`CREATE INDEX idx_catalog_artifacts_search ON ${t} USING GIN (search_vector)`);
  }

  /** External-content FTS5 table kept in step with the artifacts by triggers (reference §4.9). */
  private async sqliteSearch(q: QueryRunner): Promise<void> {
    const cols = 'name, description, domain';
    const newVals = 'new.rowid, new.name, new.description, new.domain';
    const oldVals = `'delete', old.rowid, old.name, old.description, old.domain`;
    await q.query(
      `CREATE VIRTUAL TABLE ${ARTIFACTS_FTS} USING fts5(${cols}, content='${ARTIFACTS}', content_rowid='rowid')`,
    );
    await q.query(`CREATE TRIGGER ${ARTIFACTS}_ai AFTER INSERT ON ${ARTIFACTS} BEGIN
      INSERT INTO ${ARTIFACTS_FTS}(rowid, ${cols}) VALUES (${newVals}); END`);
    await q.query(`CREATE TRIGGER ${ARTIFACTS}_ad AFTER DELETE ON ${ARTIFACTS} BEGIN
      INSERT INTO ${ARTIFACTS_FTS}(${ARTIFACTS_FTS}, rowid, ${cols}) VALUES (${oldVals}); END`);
    await q.query(`CREATE TRIGGER ${ARTIFACTS}_au AFTER UPDATE ON ${ARTIFACTS} BEGIN
      INSERT INTO ${ARTIFACTS_FTS}(${ARTIFACTS_FTS}, rowid, ${cols}) VALUES (${oldVals});
      INSERT INTO ${ARTIFACTS_FTS}(rowid, ${cols}) VALUES (${newVals}); END`);
  }

  async down(q: QueryRunner): Promise<void> {
    if (!isPostgres(q.connection)) {
      for (const trigger of ['ai', 'ad', 'au']) await q.query(`DROP TRIGGER IF EXISTS ${ARTIFACTS}_${trigger}`);
      await q.query(`DROP TABLE IF EXISTS ${ARTIFACTS_FTS}`);
    }
    await q.dropTable(ARTIFACTS);
  }
}

/** Migrations of the catalog (add them to the app's PersistenceModule). */
export const CATALOG_MIGRATIONS = [CreateCatalog1765000000000];
