import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { In, LessThan, type Repository } from 'typeorm';
import { RowInserter } from '@stoa/persistence';
import { BatchEntity, JobEntity } from './job.entity';
import { JobStatus, type BatchRecord, type JobRecord } from './job.types';

/** Filters for admin listings. */
export interface JobFilter {
  id?: string;
  owner?: string;
  status?: JobStatus;
  batchId?: string;
}

/**
 * Rows per INSERT: 18 columns × 500 = 9000 bound parameters, under the variable limits of SQLite (32766 in the
 * bundled build) and PostgreSQL (65535), so a batch of any size is written in statements of bounded size.
 */
const INSERT_CHUNK = 500;

/** The only code touching the `jobs` and `batches` tables. */
@Injectable()
export class JobRepository {
  /** A batch's rows go in on the call that creates it: cached statements, no query building. */
  private readonly jobInserts = new RowInserter(JobEntity);
  private readonly batchInserts = new RowInserter(BatchEntity);

  constructor(
    @InjectRepository(JobEntity) private readonly jobs: Repository<JobEntity>,
    @InjectRepository(BatchEntity) private readonly batches: Repository<BatchEntity>,
  ) {}

  async insertJobs(records: JobRecord[]): Promise<void> {
    for (let i = 0; i < records.length; i += INSERT_CHUNK)
      await this.jobInserts.insert(this.jobs.manager, records.slice(i, i + INSERT_CHUNK).map(toJobEntity));
  }

  /** Removes a batch and its items (a batch whose creation failed half-way). */
  async deleteBatch(id: string): Promise<void> {
    await this.jobs.delete({ batchId: id });
    await this.batches.delete({ id });
  }

  async updateJob(id: string, patch: Partial<JobRecord>): Promise<void> {
    await this.jobs.update({ id }, toJobPatch(patch));
  }

  /** Updates only while the job is in one of `from` (compare-and-set across replicas); true when it changed. */
  async transition(id: string, from: JobStatus[], patch: Partial<JobRecord>): Promise<boolean> {
    const res = await this.jobs.update({ id, status: In(from) }, toJobPatch(patch));
    return (res.affected ?? 0) > 0;
  }

  /**
   * Moves every queued or running item of a batch to `patch` (cancelled) in statements of bounded size; returns
   * the ids it found open. Each statement re-checks the status, so an item that ended meanwhile keeps its end.
   */
  async transitionBatch(batchId: string, from: JobStatus[], patch: Partial<JobRecord>): Promise<string[]> {
    const open = await this.jobs.find({ select: { id: true }, where: { batchId, status: In(from) } });
    const ids = open.map((j) => j.id);
    for (let i = 0; i < ids.length; i += INSERT_CHUNK)
      await this.jobs.update({ id: In(ids.slice(i, i + INSERT_CHUNK)), status: In(from) }, toJobPatch(patch));
    return ids;
  }

  async findJob(id: string): Promise<JobRecord | undefined> {
    const row = await this.jobs.findOneBy({ id });
    return row ? toJobRecord(row) : undefined;
  }

  /** Jobs matching `filter`, oldest first: at most `limit`, or every one (`'all'`: the items of one batch). */
  async listJobs(filter: JobFilter, limit: number | 'all' = 500): Promise<JobRecord[]> {
    const where = Object.fromEntries(Object.entries(filter).filter(([, v]) => v !== undefined));
    const take = limit === 'all' ? undefined : limit;
    const rows = await this.jobs.find({ where, order: { createdAt: 'ASC', inputIndex: 'ASC' }, take });
    return rows.map(toJobRecord);
  }

  /** Running or queued jobs this replica held when it stopped: they can never finish. */
  async failOrphans(replica: string, message: string, at: number): Promise<number> {
    const res = await this.jobs.update(
      { replica, status: In([JobStatus.running]) },
      { status: JobStatus.failed, error: message, completedAt: at },
    );
    return res.affected ?? 0;
  }

  async purgeBefore(at: number): Promise<void> {
    await this.jobs.delete({ completedAt: LessThan(at) });
    await this.batches.delete({ createdAt: LessThan(at) });
  }

  async insertBatch(b: BatchRecord): Promise<void> {
    await this.batchInserts.insert(this.batches.manager, [Object.assign(new BatchEntity(), b)]);
  }

  async findBatch(id: string): Promise<BatchRecord | undefined> {
    return (await this.batches.findOneBy({ id })) ?? undefined;
  }

  async listBatches(owner?: string, limit = 200): Promise<BatchRecord[]> {
    return this.batches.find({ where: owner ? { owner } : {}, order: { createdAt: 'DESC' }, take: limit });
  }

  /** Jobs held now by kind and status (metrics). */
  async countJobs(): Promise<{ kind: string; status: string; count: number }[]> {
    const rows = await this.jobs
      .createQueryBuilder('j')
      .select('j.kind', 'kind')
      .addSelect('j.status', 'status')
      .addSelect('COUNT(*)', 'count')
      .groupBy('j.kind')
      .addGroupBy('j.status')
      .getRawMany<{ kind: string; status: string; count: string | number }>();
    return rows.map((r) => ({ kind: r.kind, status: r.status, count: Number(r.count) }));
  }

  /** One batch's items by status (progress events: any replica sees every item's end). */
  async countBatchJobs(batchId: string): Promise<{ status: JobStatus; count: number }[]> {
    const rows = await this.jobs
      .createQueryBuilder('j')
      .select('j.status', 'status')
      .addSelect('COUNT(*)', 'count')
      .where('j.batchId = :batchId', { batchId })
      .groupBy('j.status')
      .getRawMany<{ status: JobStatus; count: string | number }>();
    return rows.map((r) => ({ status: r.status, count: Number(r.count) }));
  }

  /** Batches held now: cancelled ones and the rest (metrics). */
  async countBatches(): Promise<{ active: number; cancelled: number }> {
    const [all, cancelled] = await Promise.all([
      this.batches.count(),
      this.batches.createQueryBuilder('b').where('b.cancelledAt IS NOT NULL').getCount(),
    ]);
    return { active: all - cancelled, cancelled };
  }

  async markBatchCancelled(id: string, at: number): Promise<void> {
    await this.batches.update({ id }, { cancelledAt: at });
  }
}

function toJobEntity(r: JobRecord): JobEntity {
  return Object.assign(new JobEntity(), toJobPatch(r));
}

function toJobPatch(p: Partial<JobRecord>): Partial<JobEntity> {
  const { result, payload, ...rest } = p;
  const out: Partial<JobEntity> = { ...rest };
  if (result !== undefined) out.result = result === null ? null : JSON.stringify(result);
  if (payload !== undefined) out.payload = payload === null ? null : JSON.stringify(payload);
  return out;
}

function toJobRecord(e: JobEntity): JobRecord {
  return {
    ...e,
    kind: e.kind as JobRecord['kind'],
    status: e.status as JobStatus,
    result: e.result ? (JSON.parse(e.result) as Record<string, unknown>) : null,
    payload: e.payload ? (JSON.parse(e.payload) as unknown) : null,
  };
}
