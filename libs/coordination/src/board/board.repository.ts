import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { type EntityManager, LessThanOrEqual, type Repository } from 'typeorm';
import { BoardEntryEntity } from '../coordination.entities';
import { type BoardEntryView, iso } from '../coordination.types';
import { Transactions } from '../coordination.tx';

/** The only code touching `square_board`. */
@Injectable()
export class BoardRepository {
  constructor(
    @InjectRepository(BoardEntryEntity) private readonly board: Repository<BoardEntryEntity>,
    private readonly tx: Transactions,
  ) {}

  /**
   * Runs `fn` with the key's current entry inside a transaction that no other writer of the key overlaps (on any
   * replica), so racing puts queue instead of colliding on the next version.
   */
  write<T>(key: string, fn: (current: BoardEntryEntity | undefined, em: EntityManager) => Promise<T>): Promise<T> {
    return this.tx.runSerialised('square_board', key, async (em) => {
      const current = await em.findOne(BoardEntryEntity, { where: { key }, order: { version: 'DESC' } });
      return fn(current ?? undefined, em);
    });
  }

  async insert(em: EntityManager, row: BoardEntryEntity, keep: number): Promise<void> {
    await em.insert(BoardEntryEntity, row);
    if (row.version > keep)
      await em.delete(BoardEntryEntity, { key: row.key, version: LessThanOrEqual(row.version - keep) });
  }

  async find(key: string, version?: number): Promise<BoardEntryEntity | undefined> {
    const row =
      version === undefined
        ? await this.board.findOne({ where: { key }, order: { version: 'DESC' } })
        : await this.board.findOneBy({ key, version });
    return row ?? undefined;
  }

  /** Current entries (newest version of each key) whose key starts with `prefix`, by key. */
  list(prefix: string, limit: number): Promise<BoardEntryEntity[]> {
    const qb = this.board.createQueryBuilder('b').where((q) => {
      const sub = q
        .subQuery()
        .select('MAX(b2.version)')
        .from(BoardEntryEntity, 'b2')
        .where('b2.key = b.key')
        .getQuery();
      return `b.version = ${sub}`;
    });
    if (prefix) qb.andWhere("b.key LIKE :p ESCAPE '\\'", { p: `${prefix.replace(/[\\%_]/g, '\\$&')}%` });
    return qb.orderBy('b.key', 'ASC').limit(limit).getMany();
  }

  history(key: string, limit: number): Promise<BoardEntryEntity[]> {
    return this.board.find({ where: { key }, order: { version: 'DESC' }, take: limit });
  }
}

export function boardView(r: BoardEntryEntity): BoardEntryView {
  return {
    key: r.key,
    version: r.version,
    value: JSON.parse(r.value) as unknown,
    schema: r.schema === null ? null : (JSON.parse(r.schema) as Record<string, unknown>),
    updated_by: r.agentId,
    updated_at: iso(r.createdAt),
  };
}

/** A primary-key clash (another writer took this version first), on either database. */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; driverError?: { code?: string } };
  const code = e.driverError?.code ?? e.code ?? '';
  return code === '23505' || code.startsWith('SQLITE_CONSTRAINT');
}
