import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  dbTarget,
  postgresAvailable,
  redisAvailable,
  TEST_REDIS_URL,
  type DbTarget,
} from '../../../test/support/databases';
import { startExecutor, type RunningExecutor } from '../../../test/support/executor-process';
import { pyCalls } from '../../../test/support/py-client';
import { devToken, v2Client, type TestClient } from '../../../test/support/ts-clients';
import { ADMIN } from '../../../test/support/admin';

const ready = redisAvailable() && postgresAvailable();

interface AdminJob {
  job_id: string;
  status: string;
  replica: string | null;
}

async function adminJobs(ex: RunningExecutor, batchId: string): Promise<AdminJob[]> {
  const body = (await (await fetch(`${ex.url}/admin/v1/jobs?batch_id=${batchId}`, { headers: ADMIN })).json()) as {
    jobs: AdminJob[];
  };
  return body.jobs;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.runIf(ready)('two executor replicas sharing Redis and PostgreSQL', () => {
  let db: DbTarget;
  let a: RunningExecutor;
  let b: RunningExecutor;
  let ca: TestClient;
  let cb: TestClient;

  beforeAll(async () => {
    db = dbTarget('postgres');
    const prefix = `stoa-rep-${randomBytes(4).toString('hex')}`;
    const config = (replica: string) => ({
      database: db.database,
      sessions: { replica, id_signing_key: 'k'.repeat(32) },
      execution: { parallel_max_concurrency: 2 },
      jobs: { redis_url: TEST_REDIS_URL, prefix, lock_duration_seconds: 2, stalled_interval_seconds: 1 },
    });
    a = await startExecutor({ config: config('replica-a') });
    b = await startExecutor({ config: config('replica-b') });
    ca = await v2Client(a.mcpUrl, 'auto');
    cb = await v2Client(b.mcpUrl, 'auto');
  });
  afterAll(async () => {
    await ca?.close();
    await cb?.close();
    await a?.stop();
    await b?.stop();
    await db?.cleanup();
  });

  it("a handle stashed on one replica is its owner's on the other (Python mcp client); someone else's answers like an unknown one", async () => {
    const exec = (code: string) => ({ tool: 'execute_demo_code', args: { code } });
    const [made] = await pyCalls(a.mcpUrl, 'auto', [exec("h = stash({'rows': [1, 2, 3]})\nprint(h)")], {
      token: devToken('hana'),
    });
    const handle = String(made?.json.stdout).trim();
    expect(handle).toMatch(/^h_[0-9a-f]{12}$/);
    const [used] = await pyCalls(b.mcpUrl, 'legacy', [exec(`obj = "${handle}"\nprint(sum(obj['rows']))`)], {
      token: devToken('hana'),
    });
    expect(used?.json).toMatchObject({ success: true, stdout: '6\n' });
    const [foreign, unknown] = await pyCalls(
      b.mcpUrl,
      'auto',
      [exec(`x = "${handle}"`), exec('x = "h_000000000000"')],
      { token: devToken('ivan') },
    );
    expect(foreign?.json.success).toBe(false);
    expect(foreign?.json.error).toBe(String(unknown?.json.error).replace('h_000000000000', handle));
    // Leave no kernels behind for the tests that count them.
    for (const [ex, who, r] of [
      [a, 'hana', made],
      [b, 'hana', used],
      [b, 'ivan', foreign],
      [b, 'ivan', unknown],
    ] as const) {
      const c = await v2Client(ex.mcpUrl, 'auto', devToken(who));
      await c.call('demo_close_session', { session_id: r?.json.session_id });
      await c.close();
    }
  });

  it('both replicas pick up items of one batch, and either replica reports it', async () => {
    const r = await ca.call('demo_parallel_execute', {
      code: 'import time\ntime.sleep(0.4)\nresult = i',
      inputs: Array.from({ length: 8 }, (_, i) => ({ i })),
    });
    const batchId = r.json.batch_id as string;
    const done = await until('batch completion', async () => {
      const v = await cb.call('demo_check_batch', { batch_id: batchId });
      return v.json.status === 'running' ? undefined : v.json;
    });
    expect(done).toMatchObject({ status: 'completed', completed: 8 });
    expect((done.jobs as { result: number }[]).map((j) => j.result)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    const replicas = new Set((await adminJobs(a, batchId)).map((j) => j.replica));
    expect(replicas).toEqual(new Set(['replica-a', 'replica-b']));
  });

  it('a cancel sent to the replica that does not hold an item stops it where it runs', async () => {
    const r = await ca.call('demo_parallel_execute', {
      code: 'import time\ntime.sleep(60)',
      inputs: [{ x: 1 }, { x: 2 }, { x: 3 }, { x: 4 }],
    });
    const batchId = r.json.batch_id as string;
    const running = await until('items running on both replicas', async () => {
      const jobs = await adminJobs(a, batchId);
      const holders = new Set(jobs.filter((j) => j.status === 'running').map((j) => j.replica));
      return holders.size === 2 ? jobs : undefined;
    });
    expect(running.filter((j) => j.status === 'running').length).toBeGreaterThanOrEqual(2);
    const started = Date.now();
    const cancelled = await cb.call('demo_cancel_batch', { batch_id: batchId });
    expect(cancelled.json).toMatchObject({ status: 'partial_failure', running: 0, failed: 4 });
    // Every item's kernel is gone well before its 60 s sleep would end: no replica still runs it.
    await until(
      'kernels stopped',
      async () => {
        const health = await Promise.all(
          [a, b].map(async (ex) => ((await (await fetch(`${ex.url}/health`)).json()) as { kernels: number }).kernels),
        );
        return health.every((k) => k === 0) ? true : undefined;
      },
      15_000,
    );
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('a replica killed mid-batch leaves the batch finishable: its items are retried on the other replica', async () => {
    const r = await cb.call('demo_parallel_execute', {
      code: 'import time\ntime.sleep(1.5)\nresult = i * 10',
      inputs: Array.from({ length: 4 }, (_, i) => ({ i })),
    });
    const batchId = r.json.batch_id as string;
    await until('replica-a running an item', async () =>
      (await adminJobs(b, batchId)).some((j) => j.status === 'running' && j.replica === 'replica-a') ? true : undefined,
    );
    await a.stop('SIGKILL');
    const done = await until('batch completion after the kill', async () => {
      const v = await cb.call('demo_check_batch', { batch_id: batchId });
      return v.json.status === 'running' ? undefined : v.json;
    });
    expect(done).toMatchObject({ status: 'completed', completed: 4 });
    expect((done.jobs as { result: number }[]).map((j) => j.result)).toEqual([0, 10, 20, 30]);
    expect((await adminJobs(b, batchId)).every((j) => j.replica === 'replica-b')).toBe(true);
  });
});
