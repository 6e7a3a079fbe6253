/** Database config schema, env overrides and TypeORM options. */
export {
  buildDataSourceOptions,
  databaseConfigSchema,
  type DatabaseConfig,
  type PersistenceOptions,
} from './persistence.options';
/** Nest module opening the database and running migrations. */
export { PersistenceModule, ensurePostgresSchema } from './persistence.module';
/** Column transformer for epoch-millisecond bigint columns. */
export { epochMs } from './columns';
/** Migrations that create tables, their columns written as SQL reads (`'varchar(200) null'`). */
export { createTables, tablesMigration, type TableSpec } from './tables';
/** Numbers bound as SQLite parameters, not written into the SQL (one prepared statement per query, not per value). */
export { bindNumbersOnSqlite } from './sqlite-binding';
/** Multi-row INSERTs from cached statements (hot write paths: audit, chat posts). */
export { RowInserter } from './row-insert';
