import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { clip } from '@stoa/core';
import { EventBus } from '../bus/event-bus';
import { COORDINATION_OPTIONS } from '../coordination.tokens';
import type { CoordinationOptions } from '../coordination.config';
import { AgentEntity } from '../coordination.entities';
import { AgentNotFoundError, fix, NameTakenError, NotAuthorizedError, ValidationError } from '../coordination.errors';
import type { AgentRecord, AgentRef, AgentStatus, AgentView, SquareCaller } from '../coordination.types';
import { agentRecord, RegistryRepository } from './registry.repository';

export interface Registration {
  name: string;
  role?: string;
  capabilities?: string[];
  manifest?: Record<string, unknown>;
}

export interface AgentQuery {
  role?: string;
  capability?: string;
  status?: AgentStatus;
  name_prefix?: string;
}

/**
 * Agents and presence. An agent belongs to the principal that registered it; every call is a heartbeat; an agent
 * silent for `offline_after_seconds` is marked offline once (by whichever replica sees it first) and
 * `agent.disconnected` is published.
 */
@Injectable()
export class RegistryService implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(RegistryService.name);
  /** 2025-era MCP session → the agent it registered (the agent of later calls on that session). */
  private readonly sessions = new Map<string, string>();
  /** Calls in flight per agent on this replica (a waiting agent is alive). */
  private readonly inFlight = new Map<string, number>();
  /** When this replica last wrote each agent's heartbeat (writes are throttled). */
  private readonly written = new Map<string, number>();
  private sweeper?: NodeJS.Timeout;
  private unsubscribe?: () => void;
  /** Agent id → owner and name, which never change (agents are never deleted or renamed): cached for good. */
  private readonly refs = new LRUCache<string, AgentRef>({ max: 20_000 });
  /**
   * Principal → its agents, for calls without `_agent_id` (one query per call otherwise). Dropped whenever an
   * agent registers here or on another replica, and after two seconds at most (bus delivery is best effort).
   */
  private readonly byPrincipal = new LRUCache<string, AgentRef[]>({ max: 5_000, ttl: 2_000 });

  constructor(
    @Inject(COORDINATION_OPTIONS) private readonly opts: CoordinationOptions,
    private readonly repo: RegistryRepository,
    private readonly bus: EventBus,
  ) {}

  onModuleInit(): void {
    this.sweeper = setInterval(() => void this.sweep(), this.opts.presence.sweep_interval_seconds * 1000);
    this.sweeper.unref();
    this.unsubscribe = this.bus.on('agent.registered', () => this.byPrincipal.clear());
  }

  onApplicationShutdown(): void {
    clearInterval(this.sweeper);
    this.unsubscribe?.();
  }

  private get offlineAfterMs(): number {
    return this.opts.presence.offline_after_seconds * 1000;
  }

  /** `register`: a new agent, or the caller's own agent of that name updated (same id). */
  async register(caller: SquareCaller, r: Registration): Promise<AgentRecord> {
    const name = r.name.trim();
    if (!name)
      throw new ValidationError('name must not be empty.', fix("Call register({name: 'planner'}) with a name."));
    if (name.length > 200) throw new ValidationError('name is longer than 200 characters.', fix('Use a shorter name.'));
    const now = Date.now();
    const fields = {
      role: r.role?.trim() || null,
      capabilities: JSON.stringify(r.capabilities ?? []),
      manifest: JSON.stringify(r.manifest ?? {}),
    };
    let existing = await this.repo.findByName(name);
    if (!existing) {
      const row = Object.assign(new AgentEntity(), {
        id: randomUUID(),
        principal: caller.principal.id,
        name,
        ...fields,
        status: 'online',
        currentTask: null,
        lastHeartbeatAt: now,
        registeredAt: now,
      });
      if (await this.repo.insert(row)) return this.registered(caller, row, true);
      existing = await this.repo.findByName(name); // registered meanwhile by someone else
    }
    if (!existing || existing.principal !== caller.principal.id)
      throw new NameTakenError(
        `The agent name '${clip(name, 100)}' is registered by another principal.`,
        fix('Register under another name.', { name }),
      );
    const returning = existing.status === 'offline';
    await this.repo.updateRegistration(existing.id, fields, now);
    return this.registered(caller, { ...existing, ...fields, status: 'online', lastHeartbeatAt: now }, returning);
  }

  /** `arrived`: new, or back from offline (welcomed in #general); a re-registration of an online agent is not. */
  private async registered(caller: SquareCaller, row: AgentEntity, arrived: boolean): Promise<AgentRecord> {
    if (caller.transportSessionId) this.sessions.set(caller.transportSessionId, row.id);
    this.written.set(row.id, row.lastHeartbeatAt);
    this.bus.publish({ type: 'agent.registered', agent_id: row.id, name: row.name, role: row.role, arrived });
    return agentRecord(row, (await this.repo.lockHolders(Date.now())).has(row.id));
  }

  /**
   * The caller's agent: `_agent_id` if it is one of the caller's own (anyone else's answers like an unknown id),
   * else the agent this MCP session registered, else the caller's only agent.
   */
  async resolve(caller: SquareCaller, tool: string): Promise<AgentRef> {
    const refuse = (why: string, next: string) =>
      new NotAuthorizedError(`${why} for tool '${tool}'.`, fix(next, { tool }));
    const own = (a: AgentRef | undefined) => (a && a.principal === caller.principal.id ? a : undefined);
    if (caller.agentId) {
      const agent = own(await this.ref(caller.agentId));
      if (!agent)
        throw refuse(
          'Missing or invalid _agent_id',
          "Call register({name: '...'}) first and pass the agent_id it returns as _agent_id.",
        );
      return agent;
    }
    const bound = caller.transportSessionId ? this.sessions.get(caller.transportSessionId) : undefined;
    const agent = bound ? own(await this.ref(bound)) : undefined;
    if (agent) return agent;
    const mine = await this.agentsOf(caller.principal.id);
    if (mine.length === 0)
      throw refuse(
        'Missing or invalid _agent_id',
        "Call register({name: '...'}) first; then pass its agent_id as _agent_id.",
      );
    if (mine.length > 1)
      throw refuse(
        `Missing _agent_id: you run ${mine.length} agents`,
        `Pass _agent_id (one of: ${mine
          .slice(0, 15)
          .map((a) => `${a.name}=${a.id}`)
          .join(', ')}).`,
      );
    return mine[0]!;
  }

  private async ref(id: string): Promise<AgentRef | undefined> {
    const hit = this.refs.get(id);
    if (hit) return hit;
    const row = await this.repo.findById(id);
    if (!row) return undefined;
    const ref = agentRef(row);
    this.refs.set(id, ref);
    return ref;
  }

  private async agentsOf(principal: string): Promise<AgentRef[]> {
    const hit = this.byPrincipal.get(principal);
    if (hit) return hit;
    const mine = (await this.repo.listByPrincipal(principal)).map(agentRef);
    if (mine.length) this.byPrincipal.set(principal, mine);
    return mine;
  }

  /** A call by `agentId` starts: a heartbeat (written at most once per throttle period). */
  async begin(agentId: string): Promise<void> {
    this.inFlight.set(agentId, (this.inFlight.get(agentId) ?? 0) + 1);
    const now = Date.now();
    if (now - (this.written.get(agentId) ?? 0) < Math.min(1000, this.offlineAfterMs / 4)) return;
    this.written.set(agentId, now);
    await this.repo.touch([agentId], now);
  }

  /** The call ended. */
  end(agentId: string): void {
    const n = (this.inFlight.get(agentId) ?? 1) - 1;
    if (n <= 0) this.inFlight.delete(agentId);
    else this.inFlight.set(agentId, n);
  }

  async list(q: AgentQuery = {}): Promise<AgentView[]> {
    const [rows, busy] = await Promise.all([
      this.repo.list({ role: q.role, namePrefix: q.name_prefix }),
      this.repo.lockHolders(Date.now()),
    ]);
    return rows
      .map((r) => agentRecord(r, busy.has(r.id)))
      .filter(
        (a) =>
          (q.capability === undefined || a.capabilities.includes(q.capability)) &&
          (q.status === undefined || a.status === q.status),
      )
      .map(publicView);
  }

  /** Admin view (with principals). */
  async listRecords(): Promise<AgentRecord[]> {
    const [rows, busy] = await Promise.all([this.repo.list(), this.repo.lockHolders(Date.now())]);
    return rows.map((r) => agentRecord(r, busy.has(r.id)));
  }

  async find(id: string): Promise<AgentRecord | undefined> {
    const row = await this.repo.findById(id);
    return row && agentRecord(row, (await this.repo.lockHolders(Date.now())).has(row.id));
  }

  async findByName(name: string): Promise<AgentRecord | undefined> {
    const row = await this.repo.findByName(name);
    return row && agentRecord(row, (await this.repo.lockHolders(Date.now())).has(row.id));
  }

  /** Admin: marks an agent offline now (its locks are released, its departure announced). */
  async kick(id: string): Promise<AgentRecord> {
    const row = await this.repo.findById(id);
    if (!row)
      throw new AgentNotFoundError(
        `Agent ${clip(id, 80)} not found.`,
        fix('List agents with GET /admin/v1/square/agents.'),
      );
    if (await this.repo.markOffline(id, Number.MAX_SAFE_INTEGER)) this.departed(row, 'kicked by an administrator');
    return agentRecord({ ...row, status: 'offline' }, false);
  }

  /** One presence round: agents waiting here stay alive; silent ones go offline. */
  async sweep(now = Date.now()): Promise<void> {
    try {
      await this.repo.touch([...this.inFlight.keys()], now);
      const cutoff = now - this.offlineAfterMs;
      for (const row of await this.repo.listSilent(cutoff)) {
        if (await this.repo.markOffline(row.id, cutoff)) this.departed(row, 'silent');
      }
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'presence sweep failed');
    }
  }

  private departed(row: AgentEntity, reason: string): void {
    this.written.delete(row.id);
    for (const [sid, id] of this.sessions) if (id === row.id) this.sessions.delete(sid);
    this.bus.publish({ type: 'agent.disconnected', agent_id: row.id, name: row.name, reason });
  }
}

function agentRef(a: AgentEntity): AgentRef {
  return { id: a.id, name: a.name, principal: a.principal };
}

/** An agent as tools show it (no principal). */
export function publicView(a: AgentRecord): AgentView {
  return {
    id: a.id,
    name: a.name,
    role: a.role,
    status: a.status,
    capabilities: a.capabilities,
    manifest: a.manifest,
    current_task: a.current_task,
    last_heartbeat_at: a.last_heartbeat_at,
    registered_at: a.registered_at,
  };
}
