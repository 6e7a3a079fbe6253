import type { CustomTypesConfig, PoolClient, QueryConfig } from 'pg';
import { types } from 'pg';
import type { DataSource } from 'typeorm';
import { UnavailableError } from '@stoa/core';
import { CatalogQueryError, CatalogQueryRefusedError } from './catalog.errors';
import { type QueryRow, SCHEMA_HINT, timedOut, writeRefused } from './sqlite-query';

const INT8 = 20;
const NUMERIC = 1700;

/** count(*), sum(size_bytes)… come back as numbers, like on SQLite (strings only beyond 2^53). */
const numbers: CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (oid !== INT8 && oid !== NUMERIC) return types.getTypeParser(oid, format) as (v: string) => unknown;
    return (v: string) => {
      const n = Number(v);
      return Number.isFinite(n) && (!Number.isInteger(n) || Number.isSafeInteger(n)) ? n : v;
    };
  }) as CustomTypesConfig['getTypeParser'],
};

/**
 * query_catalog on PostgreSQL: one statement in a READ ONLY transaction with a statement_timeout, run as
 * `role` (SET LOCAL ROLE) so it can read only what that role was granted, always rolled back. The statement becomes
 * a cursor, which admits only queries (SELECT, VALUES, TABLE; no data-modifying WITH), is sent with the extended
 * protocol (one statement, no `; …` tail) and is fetched `maxRows` rows at most.
 */
export class PostgresReadOnlyQuery {
  constructor(
    private readonly ds: DataSource,
    private readonly role: string,
    private readonly timeoutMs: number,
  ) {}

  async run(sql: string, maxRows: number): Promise<QueryRow[]> {
    const qr = this.ds.createQueryRunner();
    try {
      const client = (await qr.connect()) as PoolClient;
      await client.query('BEGIN READ ONLY');
      try {
        await client.query(`SET LOCAL statement_timeout = ${Math.max(1, Math.round(this.timeoutMs))}`);
        const schema = (this.ds.options as { schema?: string }).schema;
        if (schema) await client.query(`SET LOCAL search_path = "${schema.replace(/"/g, '')}"`);
        await client.query(`SET LOCAL ROLE "${this.role}"`).catch((err: Error) => {
          throw new UnavailableError(
            `query_catalog is not usable on this server right now (catalog.query_role '${this.role}': ${err.message}); the operator must fix it.`,
          );
        });
        const body = sql.trim().replace(/;+\s*$/, '');
        await client.query({
          text: `DECLARE stoa_catalog_query NO SCROLL CURSOR FOR ${body}`,
          queryMode: 'extended',
        } as QueryConfig);
        const res = await client.query<QueryRow>({
          text: `FETCH FORWARD ${maxRows} FROM stoa_catalog_query`,
          types: numbers,
        });
        return res.rows;
      } catch (err) {
        throw translate(err, this.timeoutMs);
      } finally {
        // A rollback undoes everything but session-level advisory locks, which would stay on the pooled connection.
        await client.query('ROLLBACK; SELECT pg_advisory_unlock_all()').catch(() => undefined);
      }
    } finally {
      await qr.release();
    }
  }
}

function translate(err: unknown, timeoutMs: number): Error {
  if (err instanceof UnavailableError) return err;
  const code = (err as { code?: string }).code;
  const message = err instanceof Error ? err.message : String(err);
  if (code === '57014') return timedOut(timeoutMs);
  if (code === '25006') return writeRefused(message);
  if (code === '42501')
    return new CatalogQueryRefusedError(`query_catalog reads only the catalog: ${message}. ${SCHEMA_HINT}`);
  if (code) return new CatalogQueryError(`Query failed: ${message}. ${SCHEMA_HINT}`);
  return err instanceof Error ? err : new Error(message);
}
