/** Helpers shared by the job benches (async-job, parallel-scaling). */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { BenchClient } from './mcp';
import { ADMIN } from '../../test/support/admin';

/** Redis of the benches (the same one the tests use). */
export const BENCH_REDIS_URL = process.env.STOA_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A BullMQ key prefix no other run (bench or test) uses. */
export function uniquePrefix(tag: string): string {
  return `bench-${tag}-${randomBytes(4).toString('hex')}`;
}

/** Deletes every key under `prefix:` (what BullMQ left behind: completed jobs are kept for an hour). */
export async function dropRedisPrefix(url: string, prefix: string): Promise<number> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  let deleted = 0;
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
      cursor = next;
      if (keys.length) deleted += await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  return deleted;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export interface BatchItemView {
  job_id: string;
  status: string;
  input_index: number;
  result?: unknown;
  execution?: { execution_time: number; success: boolean; stderr: string };
  error?: string;
}
export interface BatchView {
  batch_id: string;
  parent_session_id: string;
  status: string;
  completed: number;
  running: number;
  failed: number;
  jobs: BatchItemView[];
}

/**
 * Polls `demo_check_batch` until the batch is no longer `running` (each poll is a full MCP round trip,
 * then `gapMs` of idle time). Returns the first terminal answer and the number of polls.
 */
export async function pollBatch(
  client: BenchClient,
  batchId: string,
  gapMs: number,
  timeoutMs: number,
): Promise<{ view: BatchView; polls: number }> {
  const deadline = performance.now() + timeoutMs;
  for (let polls = 1; ; polls++) {
    const view = JSON.parse(await client.call('demo_check_batch', { batch_id: batchId })) as BatchView;
    if (view.status !== 'running') return { view, polls };
    if (performance.now() > deadline)
      throw new Error(`batch ${batchId} still running after ${timeoutMs} ms: ${JSON.stringify(view).slice(0, 500)}`);
    await sleep(gapMs);
  }
}

export interface AdminJobTimes {
  job_id: string;
  status: string;
  replica: string | null;
  input_index: number | null;
  /** Epoch ms, as recorded by the executor (Date.now() on this machine). */
  createdAt: number;
  startedAt: number | null;
  completedAt: number | null;
}

/**
 * The records of a batch's items from the admin API (`GET /admin/v1/batches/:id`, with the test admin token
 * in no-op auth): when each was queued, claimed and finished, in the executor's clock.
 */
export async function adminBatchTimes(executorUrl: string, batchId: string): Promise<AdminJobTimes[]> {
  const res = await fetch(`${executorUrl}/admin/v1/batches/${batchId}`, { headers: ADMIN });
  if (!res.ok) throw new Error(`admin batch ${batchId}: HTTP ${res.status} ${await res.text()}`);
  const body = (await res.json()) as {
    jobs: {
      job_id: string;
      status: string;
      replica: string | null;
      input_index: number | null;
      created_at: string;
      started_at: string | null;
      completed_at: string | null;
    }[];
  };
  const ms = (iso: string | null) => (iso === null ? null : Date.parse(iso));
  return body.jobs.map((j) => ({
    job_id: j.job_id,
    status: j.status,
    replica: j.replica,
    input_index: j.input_index,
    createdAt: Date.parse(j.created_at),
    startedAt: ms(j.started_at),
    completedAt: ms(j.completed_at),
  }));
}

/**
 * BullMqJobQueue.close() leaves the ioredis connections it handed to its Queue and Worker open (BullMQ
 * does not close a connection the caller passed in), so a process that used one does not exit on its own.
 * Returns the sockets still open to Redis's port, for the report.
 */
export function openRedisSockets(url: string): number {
  const port = Number(new URL(url).port || 6379);
  const handles = (
    process as unknown as { _getActiveHandles: () => { remotePort?: number; destroyed?: boolean }[] }
  )._getActiveHandles();
  return handles.filter((h) => h.remotePort === port && !h.destroyed).length;
}
