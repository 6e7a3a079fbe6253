import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { clip } from '@stoa/core';
import { EventBus } from '../bus/event-bus';
import type { CoordinationOptions } from '../coordination.config';
import { fix, LockNotHeldError, ValidationError } from '../coordination.errors';
import { COORDINATION_OPTIONS } from '../coordination.tokens';
import { iso, type LockView } from '../coordination.types';
import { RegistryRepository } from '../registry/registry.repository';
import { LockRepository } from './lock.repository';
import { wakeable } from './wait';

export interface AcquireInput {
  name: string;
  ttl_seconds: number;
  wait_seconds?: number;
}

export type AcquireResult =
  | { acquired: true; name: string; fencing_token: number; expires_at: string; renewed: boolean }
  | { acquired: false; name: string; holder: string | null; expires_at: string | null };

/**
 * Leases with fencing tokens. Acquire, renew and release are single conditional UPDATEs on the shared database, so
 * a lock is exclusive across replicas; the token grows with every new holder, so a holder whose lease expired can
 * be told apart from the current one. An agent going offline loses its locks.
 */
@Injectable()
export class LockService implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(LockService.name);
  private off?: () => void;

  constructor(
    @Inject(COORDINATION_OPTIONS) private readonly opts: CoordinationOptions,
    private readonly repo: LockRepository,
    private readonly agents: RegistryRepository,
    private readonly bus: EventBus,
  ) {}

  onModuleInit(): void {
    this.off = this.bus.on('agent.disconnected', (e, local) => {
      if (local) void this.releaseAllOf(e.agent_id);
    });
  }

  onApplicationShutdown(): void {
    this.off?.();
  }

  private async releaseAllOf(agentId: string): Promise<void> {
    try {
      for (const name of await this.repo.releaseAll(agentId)) this.bus.publish({ type: 'lock.released', name });
    } catch (err) {
      this.logger.warn({ err: (err as Error).message, agentId }, 'locks of a departed agent not released');
    }
  }

  async acquire(agentId: string, a: AcquireInput, signal?: AbortSignal): Promise<AcquireResult> {
    const name = checkName(a.name);
    const maxTtl = this.opts.locks.max_ttl_seconds;
    if (!(a.ttl_seconds > 0) || a.ttl_seconds > maxTtl)
      throw new ValidationError(
        `ttl_seconds must be more than 0 and at most ${maxTtl}.`,
        fix('Pass ttl_seconds, e.g. 60, and renew by acquiring again before it ends.'),
      );
    const waitS = a.wait_seconds ?? 0;
    if (!(waitS >= 0) || waitS > this.opts.chat.max_wait_seconds)
      throw new ValidationError(
        `wait_seconds must be from 0 to ${this.opts.chat.max_wait_seconds}.`,
        fix('Pass wait_seconds, e.g. 30, or 0 to try once.'),
      );
    const deadline = Date.now() + waitS * 1000;
    const ttlMs = Math.round(a.ttl_seconds * 1000);
    await this.repo.ensure(name);
    const w = wakeable();
    const off = this.bus.on('lock.released', (e) => e.name === name && w.wake());
    try {
      for (;;) {
        const now = Date.now();
        if (await this.repo.take(name, agentId, now, now + ttlMs)) return this.held(name, false);
        if (await this.repo.renew(name, agentId, now, now + ttlMs)) return this.held(name, true);
        const row = await this.repo.find(name);
        const left = deadline - Date.now();
        if (left <= 0 || signal?.aborted)
          return {
            acquired: false,
            name,
            holder: row?.holderAgentId ?? null,
            expires_at: row?.expiresAt ? iso(row.expiresAt) : null,
          };
        // Woken by a release (any replica), else at the lease's end or the deadline.
        await w.sleep(Math.min(left, row?.expiresAt ? row.expiresAt - Date.now() + 1 : left), signal);
      }
    } finally {
      off();
    }
  }

  private async held(name: string, renewed: boolean): Promise<AcquireResult> {
    const row = await this.repo.find(name);
    return {
      acquired: true,
      name,
      fencing_token: row?.fencingToken ?? 0,
      expires_at: iso(row?.expiresAt ?? Date.now()),
      renewed,
    };
  }

  /** `lock_release`: only the holder (with its token, when given) releases; anyone else is told it is not held. */
  async release(agentId: string, name: string, fencingToken?: number): Promise<{ released: true; name: string }> {
    const n = checkName(name);
    if (!(await this.repo.release(n, agentId, fencingToken)))
      throw new LockNotHeldError(
        `You do not hold the lock '${clip(n, 100)}'${fencingToken === undefined ? '' : ` with fencing token ${fencingToken}`}.`,
        fix(
          'Its lease may have expired and been taken over: check lock_list, and acquire it again if you still need it.',
          { name: n },
        ),
      );
    this.bus.publish({ type: 'lock.released', name: n });
    return { released: true, name: n };
  }

  /** Admin: frees a lock whoever holds it. */
  async forceRelease(name: string): Promise<boolean> {
    const row = await this.repo.find(name);
    if (!row?.holderAgentId || !(await this.repo.release(name, row.holderAgentId))) return false;
    this.bus.publish({ type: 'lock.released', name });
    return true;
  }

  async list(prefix = ''): Promise<LockView[]> {
    const rows = await this.repo.listHeld(Date.now(), prefix);
    const names = new Map<string, string>();
    for (const id of new Set(rows.map((r) => r.holderAgentId as string))) {
      const a = await this.agents.findById(id);
      if (a) names.set(id, a.name);
    }
    return rows.map((r) => ({
      name: r.name,
      holder: r.holderAgentId as string,
      holder_name: names.get(r.holderAgentId as string) ?? null,
      fencing_token: r.fencingToken,
      acquired_at: iso(r.acquiredAt ?? 0),
      expires_at: iso(r.expiresAt ?? 0),
    }));
  }
}

function checkName(name: string): string {
  const n = name.trim();
  if (!n) throw new ValidationError('lock name must not be empty.', fix("Name the lock, e.g. 'deploy/prod'."));
  if (n.length > 300) throw new ValidationError('lock names are at most 300 characters.', fix('Use a shorter name.'));
  return n;
}
