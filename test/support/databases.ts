import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import type { DatabaseConfig } from '@stoa/persistence';

/** PostgreSQL used by tests (trust auth on this machine kind). */
export const TEST_PG_URL = process.env.STOA_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** In CI (`STOA_REQUIRE_SERVICES=1`) a missing service is a failure, never a skip. */
export const REQUIRE_SERVICES = process.env.STOA_REQUIRE_SERVICES === '1';

/**
 * Whether PostgreSQL answers (checked synchronously so suites can be declared per database); in CI a
 * missing service throws instead of skipping.
 */
export function postgresAvailable(): boolean {
  const probe = `const { Client } = require('pg'); const c = new Client({ connectionString: process.argv[1], connectionTimeoutMillis: 3000 });
    c.connect().then(() => c.end()).then(() => process.exit(0), (e) => { console.error(e.message); process.exit(1); });`;
  return serviceAvailable('PostgreSQL', TEST_PG_URL, probe);
}

/** Runs a connection probe in a child process (so suites can be declared synchronously). */
function serviceAvailable(name: string, url: string, probe: string): boolean {
  const res = spawnSync(process.execPath, ['-e', probe, url], { encoding: 'utf8', timeout: 10_000 });
  if (res.status === 0) return true;
  const why = (res.stderr || 'no answer').trim();
  if (REQUIRE_SERVICES) throw new Error(`${name} is required (STOA_REQUIRE_SERVICES=1) but ${url} failed: ${why}`);
  console.warn(
    `${name} tests skipped: ${url} is not reachable (${why}). Set STOA_REQUIRE_SERVICES=1 to make this an error.`,
  );
  return false;
}

export interface DbTarget {
  name: 'sqlite' | 'postgres';
  database: DatabaseConfig;
  defaultSqlitePath: string;
  /** Drops what the test created (the PostgreSQL schema). */
  cleanup: () => Promise<void>;
}

/** A fresh SQLite file, or a fresh PostgreSQL schema, for one test suite. */
export function dbTarget(name: 'sqlite' | 'postgres'): DbTarget {
  const dir = mkdtempSync(join(tmpdir(), 'stoa-db-'));
  if (name === 'sqlite')
    return {
      name,
      database: { pool_size: 1 },
      defaultSqlitePath: join(dir, 'stoa.sqlite'),
      cleanup: () => Promise.resolve(),
    };
  const schema = `t_${randomBytes(6).toString('hex')}`;
  return {
    name,
    database: { url: TEST_PG_URL, schema, pool_size: 4 },
    defaultSqlitePath: join(dir, 'unused.sqlite'),
    cleanup: async () => {
      const ds = new DataSource({ type: 'postgres', url: TEST_PG_URL });
      await ds.initialize();
      await ds.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await ds.destroy();
    },
  };
}

/** Redis used by tests. */
export const TEST_REDIS_URL = process.env.STOA_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Whether Redis answers PING (synchronous, for declaring suites); throws in CI when it does not. */
export function redisAvailable(): boolean {
  const probe = `const { Redis } = require('ioredis'); const r = new Redis(process.argv[1], { lazyConnect: true, connectTimeout: 3000, maxRetriesPerRequest: 0, retryStrategy: () => null });
    r.connect().then(() => r.ping()).then(() => { r.disconnect(); process.exit(0); }, (e) => { console.error(e.message); process.exit(1); });`;
  return serviceAvailable('Redis', TEST_REDIS_URL, probe);
}
