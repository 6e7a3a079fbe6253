import { Column, DataSource, Entity, LessThan, PrimaryColumn } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bindableNumbers, bindNumbersOnSqlite } from './sqlite-binding';

@Entity('binding_rows')
class Row {
  @PrimaryColumn({ type: 'varchar', length: 10 })
  id!: string;

  @Column({ type: 'bigint' })
  at!: number;

  @Column({ type: 'real' })
  score!: number;
}

describe('bindNumbersOnSqlite (a real in-memory SQLite through TypeORM)', () => {
  let ds: DataSource;
  const statements = () =>
    (ds.driver.createQueryRunner('master') as unknown as { stmtCache: Map<string, unknown> }).stmtCache;

  beforeAll(async () => {
    ds = bindNumbersOnSqlite(
      await new DataSource({
        type: 'better-sqlite3',
        database: ':memory:',
        entities: [Row],
        synchronize: true,
      }).initialize(),
    );
  });
  afterAll(() => ds.destroy());

  it('prepares one statement for inserts and queries that differ only in their numbers', async () => {
    const repo = ds.getRepository(Row);
    const before = statements().size;
    for (let i = 0; i < 20; i++) await repo.insert({ id: `r${i}`, at: 1_796_352_610_000 + i, score: i });
    for (let i = 0; i < 20; i++) await repo.find({ where: { at: LessThan(1_796_352_610_000 + i) } });
    expect(statements().size - before).toBe(2); // one INSERT, one SELECT (unpatched: 40)
    await repo.update({ id: 'r3' }, { score: 0.75 }); // a fraction stays a literal: REAL, as before
  });

  it('keeps what the literals meant: integers stored and compared as INTEGER, fractions as REAL', async () => {
    const repo = ds.getRepository(Row);
    expect((await repo.find({ where: { at: LessThan(1_796_352_610_005) }, order: { id: 'ASC' } })).length).toBe(5);
    const [typed] = await ds.query(`SELECT typeof(at) AS a, typeof(score) AS s, at FROM binding_rows WHERE id = 'r3'`);
    expect(typed).toEqual({ a: 'integer', s: 'real', at: 1_796_352_610_003 });
    const [row] = await ds
      .createQueryBuilder()
      .select('COUNT(*)', 'n')
      .from(Row, 'r')
      .where('r.score >= :min', { min: 2.5 })
      .andWhere('r.at < :max', { max: 1_796_352_610_019 })
      .getRawMany<{ n: number }>();
    expect(Number(row?.n)).toBe(15); // rows 4 … 18 (row 3 now scores 0.75)
  });

  it('turns only safe integers into BigInt and leaves everything else alone', () => {
    const params = { a: 5, b: 1.5, c: 'x', d: true, e: null, f: [1, 2], g: 2 ** 60 };
    expect(bindableNumbers(params)).toEqual({ ...params, a: 5n });
    const untouched = { c: 'x' };
    expect(bindableNumbers(untouched)).toBe(untouched);
  });
});
