import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { In, LessThan, type Repository } from 'typeorm';
import { RowInserter } from '@stoa/persistence';
import { SessionEntity } from './session.entity';
import { SessionStatus, type SessionFilter, type SessionRecord } from './session.types';

/** The only code touching the `sessions` table. */
@Injectable()
export class SessionRepository {
  /** A new session's row goes in on the request that creates it: one prepared statement, no query building. */
  private readonly inserts = new RowInserter(SessionEntity);

  constructor(@InjectRepository(SessionEntity) private readonly repo: Repository<SessionEntity>) {}

  async insert(record: SessionRecord): Promise<void> {
    await this.inserts.insert(this.repo.manager, [toEntity(record)]);
  }

  async findById(id: string): Promise<SessionRecord | undefined> {
    const row = await this.repo.findOneBy({ id });
    return row ? toRecord(row) : undefined;
  }

  async list(filter: SessionFilter): Promise<SessionRecord[]> {
    const where = Object.fromEntries(Object.entries(filter).filter(([, v]) => v !== undefined));
    const rows = await this.repo.find({ where, order: { createdAt: 'ASC' } });
    return rows.map(toRecord);
  }

  async countActive(filter: Omit<SessionFilter, 'status'>): Promise<number> {
    return this.repo.countBy({ ...filter, status: SessionStatus.active });
  }

  async touch(id: string, at: number): Promise<void> {
    await this.repo.update({ id }, { lastUsedAt: at });
  }

  async end(ids: string[], status: SessionStatus, reason: string, at: number): Promise<void> {
    if (!ids.length) return;
    await this.repo.update({ id: In(ids), status: SessionStatus.active }, { status, endReason: reason, endedAt: at });
  }

  /** Marks every active session of `replica` as ended (used at start-up after a restart). */
  async endAllOfReplica(replica: string, status: SessionStatus, reason: string, at: number): Promise<number> {
    const res = await this.repo.update(
      { replica, status: SessionStatus.active },
      { status, endReason: reason, endedAt: at },
    );
    return res.affected ?? 0;
  }

  /** Active sessions of `replica` idle since before `before`. */
  async listIdle(replica: string, before: number): Promise<SessionRecord[]> {
    const rows = await this.repo.findBy({ replica, status: SessionStatus.active, lastUsedAt: LessThan(before) });
    return rows.map(toRecord);
  }
}

function toEntity(r: SessionRecord): SessionEntity {
  return Object.assign(new SessionEntity(), { ...r, metadata: JSON.stringify(r.metadata) });
}

function toRecord(e: SessionEntity): SessionRecord {
  return {
    id: e.id,
    owner: e.owner,
    status: e.status as SessionStatus,
    replica: e.replica,
    createdAt: e.createdAt,
    lastUsedAt: e.lastUsedAt,
    endedAt: e.endedAt,
    endReason: e.endReason,
    metadata: JSON.parse(e.metadata || '{}') as Record<string, unknown>,
  };
}
