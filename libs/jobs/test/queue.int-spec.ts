import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { BullMqJobQueue, InProcessJobQueue, type JobQueue } from '@stoa/jobs';
import { redisAvailable, TEST_REDIS_URL } from '../../../test/support/databases';

const redis = redisAvailable();
const backends = (['in-process', 'bullmq'] as const).filter((b) => b === 'in-process' || redis);

/** Both replicas of a server share a prefix; each test gets its own. */
async function replica(kind: 'in-process' | 'bullmq', prefix: string): Promise<JobQueue> {
  if (kind === 'in-process') return new InProcessJobQueue();
  const q = new BullMqJobQueue({
    url: TEST_REDIS_URL,
    prefix,
    lockDurationMs: 5000,
    stalledIntervalMs: 5000,
    onLost: () => undefined,
  });
  await q.init();
  return q;
}

function deferred<T = void>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe.each(backends)('job queue (%s)', (kind) => {
  const opened: JobQueue[] = [];
  const open = async (prefix: string) => {
    const q = await replica(kind, prefix);
    opened.push(q);
    return q;
  };
  afterAll(async () => {
    await Promise.all(opened.map((q) => q.close()));
  });

  it('runs every job with its data, never more than `concurrency` at once', async () => {
    const q = await open(`t-${randomBytes(4).toString('hex')}`);
    let running = 0;
    let peak = 0;
    const seen: unknown[] = [];
    const done = deferred();
    await q.process('work', 2, async (_id, data) => {
      running++;
      peak = Math.max(peak, running);
      await new Promise((r) => setTimeout(r, 30));
      seen.push(data.n);
      running--;
      if (seen.length === 6) done.resolve();
    });
    for (let n = 0; n < 6; n++) await q.enqueue('work', `j_${kind}_${n}_${randomBytes(3).toString('hex')}`, { n });
    await done.promise;
    expect([...seen].sort()).toEqual([0, 1, 2, 3, 4, 5]);
    expect(peak).toBe(2);
  });

  it('cancels a waiting job before it starts and aborts a running one', async () => {
    const q = await open(`t-${randomBytes(4).toString('hex')}`);
    const started = deferred<string>();
    const aborted = deferred<string>();
    const ran: string[] = [];
    await q.process('work', 1, async (id, _data, signal) => {
      ran.push(id);
      started.resolve(id);
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
      aborted.resolve(id);
    });
    const [first, second] = [`j_a_${randomBytes(3).toString('hex')}`, `j_b_${randomBytes(3).toString('hex')}`];
    await q.enqueue('work', first, {});
    await q.enqueue('work', second, {});
    expect(await started.promise).toBe(first);
    await q.cancel('work', second);
    await q.cancel('work', first);
    expect(await aborted.promise).toBe(first);
    expect(ran).toEqual([first]);
  });
});

describe.runIf(redis)('BullMQ across replicas', () => {
  it('a cancel sent from a replica that does not hold the job aborts it where it runs', async () => {
    const prefix = `t-${randomBytes(4).toString('hex')}`;
    const holder = await replica('bullmq', prefix);
    const other = await replica('bullmq', prefix);
    try {
      const started = deferred();
      const aborted = deferred<string>();
      await holder.process('work', 1, async (id, _d, signal) => {
        started.resolve();
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
        aborted.resolve(id);
      });
      const id = `j_x_${randomBytes(3).toString('hex')}`;
      await other.enqueue('work', id, {});
      await started.promise;
      await other.cancel('work', id);
      expect(await aborted.promise).toBe(id);
    } finally {
      await holder.close();
      await other.close();
    }
  });
});

describe.runIf(redis)('BullMQ connections', () => {
  it('closes every Redis connection it opened', async () => {
    const q = await replica('bullmq', `t-${randomBytes(4).toString('hex')}`);
    await q.process('work', 1, () => Promise.resolve());
    await q.enqueue('work', `j_c_${randomBytes(3).toString('hex')}`, {});
    const opened = (q as unknown as { connections: { status: string }[] }).connections;
    await q.close();
    await new Promise((r) => setTimeout(r, 50));
    expect(opened.length).toBeGreaterThanOrEqual(4);
    expect(opened.every((c) => c.status === 'end' || c.status === 'close')).toBe(true);
  });
});
