import { LRUCache } from 'lru-cache';
import type { EntityManager, EntityTarget, ObjectLiteral } from 'typeorm';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';

/**
 * Multi-row INSERTs of one entity without TypeORM's query building (which costs more than the write on a hot
 * path): one statement per row count, built once from the entity's metadata with the driver's quoting and
 * placeholders, values normalised by the driver as TypeORM would (transformers, booleans, JSON, dates). Rows must
 * carry every column (`undefined` is written as NULL, never as the column's default).
 */
export class RowInserter<E extends ObjectLiteral> {
  private readonly statements = new LRUCache<number, string>({ max: 128 });
  private columns?: ColumnMetadata[];

  constructor(private readonly entity: EntityTarget<E>) {}

  async insert(em: EntityManager, rows: readonly E[]): Promise<void> {
    if (rows.length === 0) return;
    const { driver } = em.connection;
    const columns = (this.columns ??= em.connection
      .getMetadata(this.entity)
      .columns.filter((c) => !c.isVirtual && !c.isGenerated));
    const params: unknown[] = [];
    for (const row of rows)
      for (const c of columns)
        params.push((driver.preparePersistentValue(c.getEntityValue(row), c) as unknown) ?? null);
    await em.query(this.sql(em, columns, rows.length), params);
  }

  private sql(em: EntityManager, columns: ColumnMetadata[], n: number): string {
    const hit = this.statements.get(n);
    if (hit) return hit;
    const { driver } = em.connection;
    const pg = driver.options.type === 'postgres';
    const k = columns.length;
    const table = em.connection
      .getMetadata(this.entity)
      .tablePath.split('.')
      .map((part) => driver.escape(part))
      .join('.');
    const values = Array.from(
      { length: n },
      (_, row) => `(${columns.map((_c, i) => (pg ? `$${row * k + i + 1}` : '?')).join(', ')})`,
    );
    const sql = `INSERT INTO ${table} (${columns.map((c) => driver.escape(c.databaseName)).join(', ')}) VALUES ${values.join(', ')}`;
    this.statements.set(n, sql);
    return sql;
  }
}
