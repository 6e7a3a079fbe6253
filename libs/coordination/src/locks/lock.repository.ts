import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Brackets, IsNull, type Repository } from 'typeorm';
import { LockEntity, SignalEntity } from '../coordination.entities';

/** The only code touching `square_locks` and `square_signals`. Every lock change is one atomic statement. */
@Injectable()
export class LockRepository {
  constructor(
    @InjectRepository(LockEntity) private readonly locks: Repository<LockEntity>,
    @InjectRepository(SignalEntity) private readonly signals: Repository<SignalEntity>,
  ) {}

  /** The lock row, created unheld (token 0) when new. */
  async ensure(name: string): Promise<void> {
    await this.locks
      .createQueryBuilder()
      .insert()
      .into(LockEntity)
      .values({ name, holderAgentId: null, fencingToken: 0, acquiredAt: null, expiresAt: null })
      .orIgnore()
      .execute();
  }

  /** Takes the lock when free or expired, with the next fencing token; true when this call took it. */
  async take(name: string, agentId: string, now: number, expiresAt: number): Promise<boolean> {
    const r = await this.locks
      .createQueryBuilder()
      .update(LockEntity)
      .set({ holderAgentId: agentId, fencingToken: () => 'fencing_token + 1', acquiredAt: now, expiresAt })
      .where('name = :name', { name })
      .andWhere(new Brackets((w) => w.where('holder_agent_id IS NULL').orWhere('expires_at <= :now', { now })))
      .execute();
    return (r.affected ?? 0) > 0;
  }

  /** Extends the holder's own unexpired lease (same token); true when renewed. */
  async renew(name: string, agentId: string, now: number, expiresAt: number): Promise<boolean> {
    const r = await this.locks
      .createQueryBuilder()
      .update(LockEntity)
      .set({ expiresAt })
      .where('name = :name AND holder_agent_id = :agentId AND expires_at > :now', { name, agentId, now })
      .execute();
    return (r.affected ?? 0) > 0;
  }

  /** Frees the lock if `agentId` holds it (and, when given, with that token); true when released. */
  async release(name: string, agentId: string, token?: number): Promise<boolean> {
    const qb = this.locks
      .createQueryBuilder()
      .update(LockEntity)
      .set({ holderAgentId: null, acquiredAt: null, expiresAt: null })
      .where('name = :name AND holder_agent_id = :agentId', { name, agentId });
    if (token !== undefined) qb.andWhere('fencing_token = :token', { token });
    const r = await qb.execute();
    return (r.affected ?? 0) > 0;
  }

  /** Frees every lock `agentId` holds; returns their names. */
  async releaseAll(agentId: string): Promise<string[]> {
    const held = await this.locks.find({ select: { name: true }, where: { holderAgentId: agentId } });
    const freed: string[] = [];
    for (const { name } of held) if (await this.release(name, agentId)) freed.push(name);
    return freed;
  }

  async find(name: string): Promise<LockEntity | undefined> {
    return (await this.locks.findOneBy({ name })) ?? undefined;
  }

  /** Held, unexpired locks by name. */
  listHeld(now: number, prefix = ''): Promise<LockEntity[]> {
    const qb = this.locks
      .createQueryBuilder('l')
      .where('l.holder_agent_id IS NOT NULL AND l.expires_at > :now', { now });
    if (prefix) qb.andWhere("l.name LIKE :p ESCAPE '\\'", { p: `${prefix.replace(/[\\%_]/g, '\\$&')}%` });
    return qb.orderBy('l.name', 'ASC').getMany();
  }

  async insertSignal(row: SignalEntity): Promise<void> {
    await this.signals.insert(row);
  }

  /** Undelivered signals for `agentId` (of `kind`), oldest first. */
  pendingSignals(agentId: string, kind?: string, limit = 100): Promise<SignalEntity[]> {
    return this.signals.find({
      where: { toAgentId: agentId, deliveredAt: IsNull(), ...(kind ? { kind } : {}) },
      order: { createdAt: 'ASC', id: 'ASC' },
      take: limit,
    });
  }

  /** Marks a signal delivered; true for the one caller that claimed it (no signal is delivered twice). */
  async claimSignal(id: string, now: number): Promise<boolean> {
    const r = await this.signals
      .createQueryBuilder()
      .update(SignalEntity)
      .set({ deliveredAt: now })
      .where('id = :id AND delivered_at IS NULL', { id })
      .execute();
    return (r.affected ?? 0) > 0;
  }
}
