import { createHash } from 'node:crypto';
import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { LessThan, type Repository } from 'typeorm';
import { GroupCommit, InvalidInputError, randomToken } from '@stoa/core';
import { RowInserter } from '@stoa/persistence';
import type { AuditConfig } from './audit.config';
import { AuditEntity } from './audit.entity';
import type { AuditEvent, AuditFilter, AuditRecord } from './audit.types';

export const AUDIT_CONFIG = Symbol('AUDIT_CONFIG');
const SWEEP_MS = 3_600_000;

/**
 * The audit log: one row per proxied call (who, what, where, outcome, duration, bytes, policy decision). Code is
 * kept as a sha256 unless `store_code`. Writes never block or fail the call they describe.
 */
@Injectable()
export class AuditService implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(AuditService.name);
  private sweeper?: NodeJS.Timeout;
  /** Records queued behind the write in flight go in the next one (one multi-row INSERT per batch). */
  private readonly writes = new GroupCommit<AuditEntity, void>(async (rows) => {
    await this.inserts.insert(this.repo.manager, rows);
    return rows.map(() => undefined);
  });
  private readonly inserts = new RowInserter(AuditEntity);

  constructor(
    @Inject(AUDIT_CONFIG) private readonly config: AuditConfig,
    @InjectRepository(AuditEntity) private readonly repo: Repository<AuditEntity>,
  ) {}

  onModuleInit(): void {
    void this.purge();
    this.sweeper = setInterval(() => void this.purge(), SWEEP_MS);
    this.sweeper.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.sweeper);
    await this.writes.flush();
  }

  /** Records a call (fire and forget; a failed write is logged, never thrown). */
  record(e: AuditEvent): void {
    const row: AuditEntity = Object.assign(new AuditEntity(), {
      id: `a-${Date.now().toString(36)}-${randomToken(8)}`,
      at: Date.now(),
      // Clipped to the columns: an over-long value must never cost the record.
      principal: e.principal.slice(0, 300),
      tool: e.tool.slice(0, 200),
      upstream: e.upstream.slice(0, 100),
      sessionId: e.sessionId?.slice(0, 200) ?? null,
      outcome: e.outcome,
      decision: e.decision.slice(0, 300),
      durationMs: Math.round(e.durationMs),
      bytesIn: e.bytesIn,
      bytesOut: e.bytesOut,
      codeSha256: e.code === undefined ? null : createHash('sha256').update(e.code).digest('hex'),
      code: e.code !== undefined && this.config.store_code ? e.code : null,
    });
    this.writes
      .submit(row)
      .catch((err: Error) => this.logger.error({ err: err.message, tool: e.tool }, 'audit write failed'));
  }

  /** Waits for records still being written (tests, shutdown). */
  async flush(): Promise<void> {
    await this.writes.flush();
  }

  /** Newest first, `limit` per page; `next_cursor` continues (keyset paging on time and id). */
  async list(f: AuditFilter): Promise<{ records: AuditRecord[]; next_cursor: string | null }> {
    if (!(Number.isInteger(f.limit) && f.limit >= 1 && f.limit <= 1000))
      throw new InvalidInputError('limit must be between 1 and 1000.');
    const qb = this.repo.createQueryBuilder('a');
    if (f.principal) qb.andWhere('a.principal = :principal', { principal: f.principal });
    if (f.tool) qb.andWhere('a.tool = :tool', { tool: f.tool });
    if (f.outcome) qb.andWhere('a.outcome = :outcome', { outcome: f.outcome });
    if (f.session_id) qb.andWhere('a.session_id = :sid', { sid: f.session_id });
    // `at` is a whole bigint: PostgreSQL refuses fractional parameters, so round bounds up (same rows either way).
    if (f.since !== undefined) qb.andWhere('a.at >= :since', { since: epochBound('since', f.since) });
    if (f.until !== undefined) qb.andWhere('a.at < :until', { until: epochBound('until', f.until) });
    if (f.cursor) {
      const [at, id] = Buffer.from(f.cursor, 'base64url').toString('utf8').split('|');
      if (!at || !id || !/^\d{1,15}$/.test(at))
        throw new InvalidInputError('cursor is not one this server issued; start again without it.');
      qb.andWhere('(a.at < :cat OR (a.at = :cat AND a.id < :cid))', { cat: Number(at), cid: id });
    }
    const rows = await qb
      .orderBy('a.at', 'DESC')
      .addOrderBy('a.id', 'DESC')
      .limit(f.limit + 1)
      .getMany();
    const records = rows.slice(0, f.limit);
    const last = records[records.length - 1];
    return {
      records: records.map(view),
      next_cursor: rows.length > f.limit && last ? Buffer.from(`${last.at}|${last.id}`).toString('base64url') : null,
    };
  }

  /** Deletes records past the retention period; returns how many. */
  async purge(now = Date.now()): Promise<number> {
    try {
      const r = await this.repo.delete({ at: LessThan(now - this.config.retention_days * 86_400_000) });
      return r.affected ?? 0;
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'audit retention sweep failed');
      return 0;
    }
  }
}

function epochBound(name: string, ms: number): number {
  if (!(Math.abs(ms) <= 8.64e15)) throw new InvalidInputError(`${name} must be a time in epoch milliseconds.`);
  return Math.ceil(ms);
}

function view(r: AuditEntity): AuditRecord {
  return {
    id: r.id,
    at: new Date(r.at).toISOString(),
    principal: r.principal,
    tool: r.tool,
    upstream: r.upstream,
    session_id: r.sessionId,
    outcome: r.outcome,
    decision: r.decision,
    duration_ms: r.durationMs,
    bytes_in: r.bytesIn,
    bytes_out: r.bytesOut,
    code_sha256: r.codeSha256,
    code: r.code,
  };
}
