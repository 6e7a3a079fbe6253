import { Column, DataSource, Entity, PrimaryColumn } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { epochMs } from './columns';
import { RowInserter } from './row-insert';

@Entity('inserter_rows')
class Row {
  @PrimaryColumn({ type: 'varchar', length: 10 })
  id!: string;

  @Column({ name: 'at_ms', type: 'bigint', transformer: epochMs })
  at!: number;

  @Column({ type: 'boolean' })
  flag!: boolean;

  @Column({ type: 'simple-json' })
  tags!: string[];

  @Column({ type: 'text', nullable: true })
  note!: string | null;
}

describe('RowInserter (a real in-memory SQLite through TypeORM)', () => {
  let ds: DataSource;
  const inserter = new RowInserter(Row);
  const row = (i: number): Row =>
    Object.assign(new Row(), {
      id: `r${i}`,
      at: 1_796_352_610_000 + i,
      flag: i % 2 === 0,
      tags: [`t${i}`],
      note: i % 3 ? `n${i}` : null,
    });

  beforeAll(async () => {
    ds = await new DataSource({
      type: 'better-sqlite3',
      database: ':memory:',
      entities: [Row],
      synchronize: true,
    }).initialize();
  });
  afterAll(() => ds.destroy());

  it('writes what repository.insert would: transformers, booleans, JSON and NULLs read back the same', async () => {
    const rows = [row(0), row(1), row(2), row(3)];
    await inserter.insert(ds.manager, rows);
    await ds.getRepository(Row).insert(row(4));
    const back = await ds.getRepository(Row).find({ order: { id: 'ASC' } });
    expect(back).toEqual([...rows, row(4)]);
  });

  it('inserts inside a transaction, and nothing of it when the transaction fails', async () => {
    await expect(
      ds.transaction(async (em) => {
        await inserter.insert(em, [row(10), row(11)]);
        throw new Error('abandoned');
      }),
    ).rejects.toThrow('abandoned');
    expect(await ds.getRepository(Row).countBy({ id: 'r10' })).toBe(0);
    await ds.transaction((em) => inserter.insert(em, [row(12)]));
    expect(await ds.getRepository(Row).countBy({ id: 'r12' })).toBe(1);
  });

  it('a duplicate key fails the whole batch (the caller retries item by item)', async () => {
    await expect(inserter.insert(ds.manager, [row(20), row(0)])).rejects.toThrow(/UNIQUE/);
    expect(await ds.getRepository(Row).countBy({ id: 'r20' })).toBe(0);
  });
});
