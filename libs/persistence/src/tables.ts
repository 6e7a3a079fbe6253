import { type MigrationInterface, type QueryRunner, Table, type TableColumnOptions, TableIndex } from 'typeorm';

/**
 * A table as a migration creates it. A column is written the way SQL reads: `'varchar(300)'`, `'bigint null'`,
 * `'varchar(40) primary'`, `"text default ''"`, `'varchar unique not null'`; indices map a name to columns.
 */
export interface TableSpec {
  columns: Record<string, string>;
  indices?: Record<string, string[]>;
}

const TYPE = /^(\w+)(?:\((\d+)\))?$/;
const FLAGS = new Set(['primary', 'unique', 'null', 'not null']);

/** TypeORM's column options from one column spec; a spec it cannot read is a programming error. */
export function columnOptions(name: string, spec: string): TableColumnOptions {
  const [head = '', dflt] = spec.split(' default ');
  const [typeAndLength = '', ...rest] = head.split(' ');
  const flags = rest.join(' ').replace('not null', 'not_null').split(' ').filter(Boolean);
  const m = TYPE.exec(typeAndLength);
  if (!m || flags.some((f) => !FLAGS.has(f.replace('_', ' '))))
    throw new Error(`Column '${name}': cannot read '${spec}' (e.g. 'varchar(200) null', "text default ''").`);
  return {
    name,
    type: m[1]!,
    ...(m[2] ? { length: m[2] } : {}),
    ...(flags.includes('primary') ? { isPrimary: true } : {}),
    ...(flags.includes('unique') ? { isUnique: true } : {}),
    ...(flags.includes('null') ? { isNullable: true } : flags.includes('not_null') ? { isNullable: false } : {}),
    ...(dflt === undefined ? {} : { default: dflt === 'true' || dflt === 'false' ? dflt === 'true' : dflt }),
  };
}

/** Creates each table and its indices, in order (portable: SQLite and PostgreSQL). */
export async function createTables(q: QueryRunner, tables: Record<string, TableSpec>): Promise<void> {
  for (const [name, spec] of Object.entries(tables)) {
    const columns = Object.entries(spec.columns).map(([c, s]) => columnOptions(c, s));
    await q.createTable(new Table({ name, columns }));
    for (const [index, columnNames] of Object.entries(spec.indices ?? {}))
      await q.createIndex(name, new TableIndex({ name: index, columnNames }));
  }
}

/** A migration that creates `tables` and drops them in reverse order; `name` ends in its 13-digit timestamp. */
export function tablesMigration(name: string, tables: Record<string, TableSpec>): new () => MigrationInterface {
  return class implements MigrationInterface {
    name = name;

    async up(q: QueryRunner): Promise<void> {
      await createTables(q, tables);
    }

    async down(q: QueryRunner): Promise<void> {
      for (const table of Object.keys(tables).reverse()) await q.dropTable(table);
    }
  };
}
