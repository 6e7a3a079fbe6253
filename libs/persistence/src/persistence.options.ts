import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { DataSourceOptions, MixedList } from 'typeorm';
import { z } from 'zod';

/** `database:` in a server YAML. */
export const databaseConfigSchema = z
  .strictObject({
    /** `postgres://…` for PostgreSQL; omitted → SQLite file at `sqlite_path`. */
    url: z.string().optional().meta({ env: 'DATABASE_URL' }),
    /** SQLite file; default `{data_dir}/stoa.sqlite`. */
    sqlite_path: z.string().optional().meta({ env: 'STOA_SQLITE_PATH' }),
    /** PostgreSQL schema (tests use one per run). */
    schema: z.string().optional(),
    pool_size: z.coerce.number().int().positive().default(10),
  })
  .prefault({});
export type DatabaseConfig = z.output<typeof databaseConfigSchema>;

export interface PersistenceOptions {
  database: DatabaseConfig;
  /** SQLite file used when neither `url` nor `sqlite_path` is set. */
  defaultSqlitePath: string;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  migrations: MixedList<Function>;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  entities?: MixedList<Function>;
}

/** Which database a config points at. */
export function databaseKind(db: DatabaseConfig): 'postgres' | 'sqlite' {
  return db.url && /^postgres(ql)?:\/\//.test(db.url) ? 'postgres' : 'sqlite';
}

/** TypeORM options: migrations run at start, never `synchronize`. */
export function buildDataSourceOptions(opts: PersistenceOptions): DataSourceOptions {
  const common = {
    migrations: opts.migrations,
    entities: opts.entities ?? [],
    migrationsRun: true,
    synchronize: false,
    logging: false as const,
  };
  if (databaseKind(opts.database) === 'postgres') {
    return {
      ...common,
      type: 'postgres',
      url: opts.database.url,
      schema: opts.database.schema,
      extra: { max: opts.database.pool_size },
    };
  }
  const file = resolve(
    opts.database.url?.replace(/^sqlite:(\/\/)?/, '') || opts.database.sqlite_path || opts.defaultSqlitePath,
  );
  mkdirSync(dirname(file), { recursive: true });
  return {
    ...common,
    type: 'better-sqlite3',
    database: file,
    enableWAL: true,
    timeout: 5000,
    // Prepared statements are cached per connection, first in first out; TypeORM's 100 were too few for the
    // statements of group commits (one multi-row INSERT per batch size), so hot statements were re-prepared.
    statementCacheSize: 1000,
  };
}
