import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { InvalidInputError, randomToken } from '@stoa/core';
import type { Artifact } from '../artifacts/artifacts';
import { ArtifactEntity, TransferEntity } from './transfer.entities';

/** What a finished send or receipt leaves in the log. */
export type TransferEvent = Omit<TransferEntity, 'at'>;

export interface RecordFilter {
  owner?: string;
  session_id?: string;
  limit: number;
}

/**
 * The persisted view of data leaving and entering sessions: artifact discoveries and transfers, for the
 * admin API. Writes never block or fail the work they describe.
 */
@Injectable()
export class TransferLog implements OnApplicationShutdown {
  private readonly logger = new Logger(TransferLog.name);
  private readonly pending = new Set<Promise<unknown>>();

  constructor(
    @InjectRepository(ArtifactEntity) private readonly artifacts: Repository<ArtifactEntity>,
    @InjectRepository(TransferEntity) private readonly transfers: Repository<TransferEntity>,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await this.flush();
  }

  /** Records files an execution wrote. */
  artifactsWritten(owner: string, sessionId: string, list: readonly Artifact[]): void {
    if (!list.length) return;
    const at = Date.now();
    const rows = list.map((a) =>
      Object.assign(new ArtifactEntity(), {
        id: `f-${at.toString(36)}-${randomToken(10)}`,
        at,
        owner: owner.slice(0, 300),
        sessionId,
        name: a.name.slice(0, 1000),
        sizeBytes: a.size_bytes,
        mimeType: a.mime_type.slice(0, 200),
      }),
    );
    this.track(this.artifacts.insert(rows));
  }

  /** Records a transfer. */
  transfer(e: TransferEvent): void {
    const row = Object.assign(new TransferEntity(), {
      ...e,
      at: Date.now(),
      owner: e.owner.slice(0, 300),
      dataRef: e.dataRef.slice(0, 1000),
      name: e.name.slice(0, 1000),
      peer: e.peer.slice(0, 200),
    });
    this.track(this.transfers.insert(row));
  }

  async listArtifacts(f: RecordFilter): Promise<ArtifactEntity[]> {
    return this.artifacts.find({ where: where(f), order: { at: 'DESC', id: 'DESC' }, take: limit(f) });
  }

  async listTransfers(f: RecordFilter & { direction?: string }): Promise<TransferEntity[]> {
    return this.transfers.find({
      where: { ...where(f), ...(f.direction ? { direction: f.direction } : {}) },
      order: { at: 'DESC', id: 'DESC' },
      take: limit(f),
    });
  }

  /** Waits for pending writes (tests, shutdown). */
  async flush(): Promise<void> {
    await Promise.allSettled([...this.pending]);
  }

  private track(p: Promise<unknown>): void {
    const w = p.catch((err: Error) => this.logger.error({ err: err.message }, 'transfer log write failed'));
    this.pending.add(w);
    void w.finally(() => this.pending.delete(w));
  }
}

function where(f: RecordFilter): Record<string, string> {
  return { ...(f.owner ? { owner: f.owner } : {}), ...(f.session_id ? { sessionId: f.session_id } : {}) };
}

function limit(f: RecordFilter): number {
  if (!(Number.isInteger(f.limit) && f.limit >= 1 && f.limit <= 1000))
    throw new InvalidInputError('limit must be an integer between 1 and 1000.');
  return f.limit;
}
