import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { In, LessThan, MoreThan, type Repository } from 'typeorm';
import { AgentEntity, LockEntity } from '../coordination.entities';
import { type AgentRecord, type AgentStatus, iso } from '../coordination.types';

export interface AgentFilter {
  role?: string;
  namePrefix?: string;
}

/** The only code touching `square_agents`. */
@Injectable()
export class RegistryRepository {
  constructor(
    @InjectRepository(AgentEntity) private readonly agents: Repository<AgentEntity>,
    @InjectRepository(LockEntity) private readonly locks: Repository<LockEntity>,
  ) {}

  async findById(id: string): Promise<AgentEntity | undefined> {
    return (await this.agents.findOneBy({ id })) ?? undefined;
  }

  async findByName(name: string): Promise<AgentEntity | undefined> {
    return (await this.agents.findOneBy({ name })) ?? undefined;
  }

  listByPrincipal(principal: string): Promise<AgentEntity[]> {
    return this.agents.find({ where: { principal }, order: { lastHeartbeatAt: 'DESC' } });
  }

  /** Registration order (the reference's), then id. */
  list(f: AgentFilter = {}): Promise<AgentEntity[]> {
    const qb = this.agents.createQueryBuilder('a');
    if (f.role !== undefined) qb.andWhere('a.role = :role', { role: f.role });
    if (f.namePrefix) qb.andWhere("a.name LIKE :p ESCAPE '\\'", { p: `${f.namePrefix.replace(/[\\%_]/g, '\\$&')}%` });
    return qb.orderBy('a.registered_at', 'ASC').addOrderBy('a.id', 'ASC').getMany();
  }

  /** Inserts; false when the name was taken meanwhile (unique index). */
  async insert(row: AgentEntity): Promise<boolean> {
    await this.agents.createQueryBuilder().insert().into(AgentEntity).values(row).orIgnore().execute();
    return (await this.findById(row.id)) !== undefined;
  }

  async updateRegistration(
    id: string,
    fields: Pick<AgentEntity, 'role' | 'capabilities' | 'manifest'>,
    now: number,
  ): Promise<void> {
    await this.agents.update({ id }, { ...fields, status: 'online', lastHeartbeatAt: now });
  }

  /** A heartbeat: online again, heard now. */
  async touch(ids: string[], now: number): Promise<void> {
    if (ids.length) await this.agents.update({ id: In(ids) }, { status: 'online', lastHeartbeatAt: now });
  }

  /** Online agents silent since before `cutoff`. */
  listSilent(cutoff: number): Promise<AgentEntity[]> {
    return this.agents.find({ where: { status: 'online', lastHeartbeatAt: LessThan(cutoff) } });
  }

  /**
   * Marks one agent offline unless it was heard from since `cutoff` (or is offline already); true for the one
   * replica whose update won, so a departure is announced once.
   */
  async markOffline(id: string, cutoff: number): Promise<boolean> {
    const r = await this.agents.update(
      { id, status: 'online', lastHeartbeatAt: LessThan(cutoff) },
      { status: 'offline' },
    );
    return (r.affected ?? 0) > 0;
  }

  /** Agents holding an unexpired lock (they are `busy`). */
  async lockHolders(now: number): Promise<Set<string>> {
    const rows = await this.locks.find({ select: { holderAgentId: true }, where: { expiresAt: MoreThan(now) } });
    return new Set(rows.map((r) => r.holderAgentId).filter((x): x is string => x !== null));
  }
}

/** A row as the lib shows it; `busy` when online and holding a lock. */
export function agentRecord(a: AgentEntity, busy: boolean): AgentRecord {
  const status: AgentStatus = a.status === 'offline' ? 'offline' : busy ? 'busy' : 'online';
  return {
    id: a.id,
    name: a.name,
    role: a.role,
    status,
    capabilities: JSON.parse(a.capabilities) as string[],
    manifest: JSON.parse(a.manifest) as Record<string, unknown>,
    current_task: a.currentTask,
    last_heartbeat_at: iso(a.lastHeartbeatAt),
    registered_at: iso(a.registeredAt),
    principal: a.principal,
  };
}
