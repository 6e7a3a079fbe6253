import { Test, type TestingModule } from '@nestjs/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '@stoa/core';
import { InProcessJobQueue, JOB_MIGRATIONS, JOB_QUEUE, JobsModule, JobService, JobStatus } from '@stoa/jobs';
import { PersistenceModule } from '@stoa/persistence';
import { dbTarget, postgresAvailable, type DbTarget } from '../../../test/support/databases';

const alice: Principal = { id: 'alice@t', roles: [], scopes: [], source: 'noop' };
const bob: Principal = { id: 'bob@t', roles: [], scopes: [], source: 'noop' };
const pg = postgresAvailable();

/** The in-process queue, refusing every enqueue after the first `okEnqueues` (a Redis that goes away mid-batch). */
class FailingQueue extends InProcessJobQueue {
  readonly cancelled: string[] = [];
  constructor(private okEnqueues: number) {
    super();
  }
  override enqueue(queue: string, jobId: string, data: Record<string, unknown>): Promise<void> {
    if (this.okEnqueues-- <= 0) return Promise.reject(new Error('queue unavailable'));
    return super.enqueue(queue, jobId, data);
  }
  override cancel(queue: string, jobId: string): Promise<void> {
    this.cancelled.push(jobId);
    return super.cancel(queue, jobId);
  }
}

async function boot(
  db: DbTarget,
  replica: string,
  retentionMs = 3_600_000,
  queue?: InProcessJobQueue,
): Promise<TestingModule> {
  const builder = Test.createTestingModule({
    imports: [
      PersistenceModule.forRoot({
        database: db.database,
        defaultSqlitePath: db.defaultSqlitePath,
        migrations: [...JOB_MIGRATIONS],
      }),
      JobsModule.forRoot({
        config: { retention_hours: 1, lock_duration_seconds: 30, stalled_interval_seconds: 30 },
        prefix: 't',
        settings: { replica, retentionMs, batchQueue: 'q', concurrency: 1 },
      }),
    ],
  });
  if (queue) builder.overrideProvider(JOB_QUEUE).useValue(queue);
  const mod = await builder.compile();
  await mod.init();
  return mod;
}

describe.each((['sqlite', 'postgres'] as const).filter((t) => t === 'sqlite' || pg))('job records on %s', (kind) => {
  const db = dbTarget(kind);
  let mod: TestingModule;
  let jobs: JobService;
  beforeAll(async () => {
    mod = await boot(db, 'r1');
    jobs = mod.get(JobService);
  });
  afterAll(async () => {
    await mod?.close();
    await db.cleanup();
  });

  it('records a background job with live output, finishes it once, and hides it from other owners', async () => {
    const job = await jobs.startBackground(alice.id, 's-1', 'work', false, { stdout: 'so far\n', stderr: '' });
    jobs.appendOutput(job.id, 'stdout', 'more\n');
    expect((await jobs.getJob(alice, job.id)).stdout).toBe('so far\nmore\n');
    await expect(jobs.getJob(bob, job.id)).rejects.toThrow(`Job ${job.id} not found`);
    await expect(jobs.getJob(bob, 'j_000000000000')).rejects.toThrow('Job j_000000000000 not found');
    expect(await jobs.finish(job.id, { status: JobStatus.completed, result: { success: true } })).toBe(true);
    expect(await jobs.finish(job.id, { status: JobStatus.failed })).toBe(false);
    expect(await jobs.getJob(alice, job.id)).toMatchObject({
      status: 'completed',
      stdout: 'so far\nmore\n',
      result: { success: true },
    });
  });

  it('creates a batch of queued items that a replica claims once; a cancelled item cannot be claimed', async () => {
    const { batch, jobs: items } = await jobs.createBatch(alice.id, 's-parent', 'result', [
      { sessionId: 's-a', data: {} },
      { sessionId: 's-b', data: {} },
    ]);
    expect(items.map((j) => [j.status, j.inputIndex])).toEqual([
      ['queued', 0],
      ['queued', 1],
    ]);
    await jobs.cancelBatch(alice, batch.id);
    expect(await jobs.claim(items[0]?.id as string)).toBe(false);
    const view = await jobs.getBatch(alice, batch.id);
    expect(view.jobs.map((j) => j.status)).toEqual(['cancelled', 'cancelled']);
    await expect(jobs.getBatch(bob, batch.id)).rejects.toThrow(`404: Batch '${batch.id}' not found`);
  });

  it('writes a batch of 4000 items in bounded statements (over the SQL variable limit of one INSERT), then shows and cancels all of them', async () => {
    const items = Array.from({ length: 4000 }, (_, i) => ({ sessionId: `s-big-${i}`, data: {} }));
    const { batch } = await jobs.createBatch(alice.id, 's-parent', 'result', items);
    const view = await jobs.getBatch(alice, batch.id);
    expect({ total: view.batch.total, rows: view.jobs.length }).toEqual({ total: 4000, rows: 4000 });
    expect(view.jobs.at(-1)?.inputIndex).toBe(3999);
    expect(await jobs.listJobs({ batchId: batch.id, status: JobStatus.queued })).toHaveLength(500); // a listing pages
    await jobs.cancelBatch(alice, batch.id);
    const after = await jobs.getBatch(alice, batch.id);
    expect(after.jobs.filter((j) => j.status !== JobStatus.cancelled)).toHaveLength(0);
  });

  it('leaves no batch, job or queued item behind when enqueueing fails half-way', async () => {
    const queue = new FailingQueue(3);
    const other = await boot(db, 'r-failing', 3_600_000, queue);
    try {
      const failing = other.get(JobService);
      const before = (await failing.listBatches(bob.id)).length;
      const items = Array.from({ length: 120 }, (_, i) => ({ sessionId: `s-f-${i}`, data: {} }));
      await expect(failing.createBatch(bob.id, 's-parent', 'result', items)).rejects.toThrow('queue unavailable');
      expect((await failing.listBatches(bob.id)).length).toBe(before);
      expect(await failing.listJobs({ owner: bob.id })).toEqual([]);
      expect(queue.cancelled).toHaveLength(3);
    } finally {
      await other.close();
    }
  });

  it('fails the running jobs of a replica that restarts, with a message saying so', async () => {
    const job = await jobs.startBackground(alice.id, 's-2', '', true);
    await mod.close();
    mod = await boot(db, 'r1');
    jobs = mod.get(JobService);
    expect(await jobs.getJob(alice, job.id)).toMatchObject({
      status: 'failed',
      error: expect.stringContaining('The executor stopped while this job was running'),
    });
  });

  it('purges finished jobs older than the retention period', async () => {
    const job = await jobs.startBackground(alice.id, 's-3', '', false);
    await jobs.finish(job.id, { status: JobStatus.completed });
    await mod.close();
    mod = await boot(db, 'r1', -1); // everything finished is already past retention
    jobs = mod.get(JobService);
    await (jobs as unknown as { purge: () => Promise<void> }).purge();
    await expect(jobs.getJob(alice, job.id)).rejects.toThrow('not found');
  });
});
