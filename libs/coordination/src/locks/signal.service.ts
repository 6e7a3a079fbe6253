import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { clip } from '@stoa/core';
import { EventBus } from '../bus/event-bus';
import type { CoordinationOptions } from '../coordination.config';
import { SignalEntity } from '../coordination.entities';
import { AgentNotFoundError, fix, ValidationError } from '../coordination.errors';
import { COORDINATION_OPTIONS } from '../coordination.tokens';
import { iso, type SignalView } from '../coordination.types';
import { RegistryRepository } from '../registry/registry.repository';
import { LockRepository } from './lock.repository';
import { wakeable } from './wait';

export interface SendInput {
  /** Agent id or name. */
  to: string;
  kind: string;
  payload?: unknown;
}

/**
 * Signals: a small message to one agent, delivered once (claimed by a conditional UPDATE, so two waits of the same
 * agent on two replicas never both get it). Only the addressee's own principal can wait for them.
 */
@Injectable()
export class SignalService {
  constructor(
    @Inject(COORDINATION_OPTIONS) private readonly opts: CoordinationOptions,
    private readonly repo: LockRepository,
    private readonly agents: RegistryRepository,
    private readonly bus: EventBus,
  ) {}

  async send(
    fromAgentId: string,
    s: SendInput,
  ): Promise<{ signal_id: string; to: string; kind: string; created_at: string }> {
    const kind = s.kind.trim();
    if (!kind || kind.length > 100)
      throw new ValidationError(
        'kind must be 1 to 100 characters.',
        fix("Name the kind of signal, e.g. 'review_requested'."),
      );
    const to = (await this.agents.findById(s.to)) ?? (await this.agents.findByName(s.to));
    if (!to)
      throw new AgentNotFoundError(
        `No agent '${clip(s.to, 80)}' is registered.`,
        fix('Find agents with list_agents; pass an agent id or name as to.'),
      );
    const row = Object.assign(new SignalEntity(), {
      id: randomUUID(),
      toAgentId: to.id,
      fromAgentId,
      kind,
      payload: JSON.stringify(s.payload ?? null),
      createdAt: Date.now(),
      deliveredAt: null,
    });
    await this.repo.insertSignal(row);
    this.bus.publish({ type: 'signal.sent', to: to.id, signal_id: row.id });
    return { signal_id: row.id, to: to.id, kind, created_at: iso(row.createdAt) };
  }

  /** `signal_wait`: the caller's undelivered signals (of `kind`), waiting up to `timeout` seconds for one. */
  async wait(
    agentId: string,
    q: { kind?: string; timeout: number },
    signal?: AbortSignal,
  ): Promise<{ signals: SignalView[]; timed_out: boolean }> {
    if (!(q.timeout >= 0) || q.timeout > this.opts.chat.max_wait_seconds)
      throw new ValidationError(
        `timeout must be from 0 to ${this.opts.chat.max_wait_seconds} seconds.`,
        fix('Pass timeout in seconds, e.g. 60.'),
      );
    const deadline = Date.now() + q.timeout * 1000;
    const w = wakeable();
    const off = this.bus.on('signal.sent', (e) => e.to === agentId && w.wake());
    try {
      for (;;) {
        const claimed = await this.claim(agentId, q.kind);
        if (claimed.length) return { signals: claimed, timed_out: false };
        const left = deadline - Date.now();
        if (left <= 0 || signal?.aborted) return { signals: [], timed_out: true };
        await w.sleep(left, signal);
      }
    } finally {
      off();
    }
  }

  private async claim(agentId: string, kind?: string): Promise<SignalView[]> {
    const out: SignalView[] = [];
    const now = Date.now();
    for (const s of await this.repo.pendingSignals(agentId, kind?.trim() || undefined)) {
      if (await this.repo.claimSignal(s.id, now))
        out.push({
          id: s.id,
          from: s.fromAgentId,
          to: s.toAgentId,
          kind: s.kind,
          payload: JSON.parse(s.payload) as unknown,
          created_at: iso(s.createdAt),
        });
    }
    return out;
  }
}
