import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shutDown } from '../../../test/support/app-process';
import { redisAvailable, TEST_REDIS_URL } from '../../../test/support/databases';
import { startExecutor, type RunningExecutor } from '../../../test/support/executor-process';
import { devToken, v2Client, type TestClient } from '../../../test/support/ts-clients';
import { ADMIN } from '../../../test/support/admin';

const backends = (['in-process', 'bullmq'] as const).filter((b) => b === 'in-process' || redisAvailable());

function jobsConfig(kind: 'in-process' | 'bullmq') {
  return kind === 'bullmq' ? { redis_url: TEST_REDIS_URL, prefix: `stoa-test-${randomBytes(4).toString('hex')}` } : {};
}

/** Polls check_job until it is terminal (each call is a real MCP round trip). */
async function waitJob(c: TestClient, tool: string, jobId: string) {
  for (let i = 0; i < 300; i++) {
    const r = await c.call(tool, { job_id: jobId });
    if (r.json.status !== 'running') return r.json;
    await new Promise((res) => setTimeout(res, 50));
  }
  throw new Error(`job ${jobId} did not finish`);
}

async function waitBatch(c: TestClient, batchId: string) {
  for (let i = 0; i < 400; i++) {
    const r = await c.call('demo_check_batch', { batch_id: batchId });
    if (r.json.status !== 'running') return r.json;
    await new Promise((res) => setTimeout(res, 50));
  }
  throw new Error(`batch ${batchId} did not finish`);
}

describe.each(backends)('background jobs and batches (%s)', (kind) => {
  let ex: RunningExecutor;
  let alice: TestClient;
  let bob: TestClient;

  beforeAll(async () => {
    ex = await startExecutor({
      config: { execution: { mode: 'adaptive', promotion_threshold_s: 1 }, jobs: jobsConfig(kind) },
    });
    alice = await v2Client(ex.mcpUrl, 'auto', devToken('alice'));
    bob = await v2Client(ex.mcpUrl, 'auto', devToken('bob'));
  });
  afterAll(() => shutDown(alice, bob, ex));

  it('adaptive mode answers fast code inline', async () => {
    const r = await alice.call('execute_demo_code', { code: '1 + 1' });
    expect(r.json).toMatchObject({ stdout: '2\n', success: true });
  });

  it('promotes a slow run to a job that keeps its kernel state and output, and blocks the session meanwhile', async () => {
    const r = await alice.call('execute_demo_code', {
      code: "import time\nprint('before')\ntime.sleep(1.5)\nprint('after')\nkept = 42",
      description: 'slow',
    });
    expect(r.json).toMatchObject({
      status: 'running',
      promoted: true,
      description: 'slow',
      poll_tool: 'demo_check_job',
    });
    expect(r.json.message).toBe(
      `Execution exceeded 1s and was promoted to background. Poll with demo_check_job(job_id='${r.json.job_id as string}').`,
    );
    const busy = await alice.call('execute_demo_code', { code: 'kept', execution_session_id: r.json.session_id });
    expect(busy.json.stderr).toBe(`Session busy — job ${r.json.job_id as string} is still running`);
    const done = await waitJob(alice, 'demo_check_job', r.json.job_id as string);
    expect(done).toMatchObject({ status: 'completed', success: true, stdout: 'before\nafter\n', promoted: true });
    const after = await alice.call('execute_demo_code', { code: 'kept', execution_session_id: r.json.session_id });
    expect(after.json.stdout).toBe('42\n');
  });

  it("answers someone else's job id exactly like an unknown one", async () => {
    const r = await alice.call('execute_demo_code', { code: 'import time; time.sleep(1.2)' });
    const foreign = await bob.call('demo_check_job', { job_id: r.json.job_id });
    const unknown = await bob.call('demo_check_job', { job_id: 'j_000000000000' });
    expect(foreign.json).toEqual({ success: false, error: `Job ${r.json.job_id as string} not found` });
    expect(unknown.json).toEqual({ success: false, error: 'Job j_000000000000 not found' });
  });

  it('streams output lines of a long run as progress notifications to a client that asked for them', async () => {
    const warm = await alice.call('execute_demo_code', { code: 'import time' });
    const r = await alice.callWithProgress?.('execute_demo_code', {
      code: "for i in range(3):\n    print(f'step {i}', flush=True)\n    time.sleep(0.2)",
      execution_session_id: warm.json.session_id,
    });
    expect(r?.json.stdout).toBe('step 0\nstep 1\nstep 2\n');
    expect(r?.progress.join('')).toBe('step 0\nstep 1\nstep 2\n');
    expect(r?.progress.length).toBeGreaterThanOrEqual(2);
  });

  it('lets an administrator list a user’s batches and jobs', async () => {
    const r = await alice.call('demo_parallel_execute', { code: 'result = 1', inputs: [{ a: 1 }] });
    await waitBatch(alice, r.json.batch_id as string);
    const batches = (await (
      await fetch(`${ex.url}/admin/v1/batches?owner=alice@tenant-a`, { headers: ADMIN })
    ).json()) as { batches: { batch_id: string }[] };
    expect(batches.batches.map((b) => b.batch_id)).toContain(r.json.batch_id);
    const jobs = (await (
      await fetch(`${ex.url}/admin/v1/jobs?batch_id=${r.json.batch_id as string}`, { headers: ADMIN })
    ).json()) as { jobs: { status: string; owner: string }[] };
    expect(jobs.jobs).toEqual([expect.objectContaining({ status: 'completed', owner: 'alice@tenant-a' })]);
  });

  it('runs a parallel batch: each input in a fresh kernel, results collected', async () => {
    const r = await alice.call('demo_parallel_execute', {
      code: 'result = {"n": n, "sq": n * n, "fresh": "leak" not in globals()}\nleak = 1',
      inputs: [{ n: 1 }, { n: 2 }, { n: 3 }],
    });
    expect((r.json.jobs as unknown[]).length).toBe(3);
    const done = await waitBatch(alice, r.json.batch_id as string);
    expect(done).toMatchObject({ status: 'completed', completed: 3, running: 0, failed: 0 });
    expect((done.jobs as { result: unknown; input_index: number }[]).map((j) => j.result)).toEqual([
      { n: 1, sq: 1, fresh: true },
      { n: 2, sq: 4, fresh: true },
      { n: 3, sq: 9, fresh: true },
    ]);
    const again = await alice.call('demo_check_batch', { batch_id: r.json.batch_id });
    expect(again.json.status).toBe('completed'); // readable again: no delivered-once deletion
  });

  it('reports a failing item as partial_failure with its traceback, and repr() for non-JSON results', async () => {
    const r = await alice.call('demo_parallel_execute', {
      code: 'result = {1, 2} if ok else 1/0',
      inputs: [{ ok: true }, { ok: false }],
    });
    const done = await waitBatch(alice, r.json.batch_id as string);
    const jobs = done.jobs as { status: string; result: unknown; execution: { stderr: string } }[];
    expect(done.status).toBe('partial_failure');
    expect(jobs[0]).toMatchObject({ status: 'completed', result: '{1, 2}' });
    expect(jobs[1]?.status).toBe('failed');
    expect(jobs[1]?.execution.stderr).toContain('ZeroDivisionError');
  });

  it('batches from a stateless client do not use up live sessions', async () => {
    const before = (await alice.call('demo_list_sessions', {})).json.count as number;
    for (let i = 0; i < 3; i++) await alice.call('demo_parallel_execute', { code: 'result = 1', inputs: [{ a: i }] });
    expect((await alice.call('demo_list_sessions', {})).json.count).toBe(before);
  });

  it('validates batch inputs with the reference messages', async () => {
    const call = (args: Record<string, unknown>) => alice.call('demo_parallel_execute', { code: 'pass', ...args });
    expect((await call({ inputs: [] })).json.error).toBe("'inputs' must be a non-empty list of dictionaries");
    expect((await call({ inputs: [{ 'not valid': 1 }] })).json.error).toBe(
      "Invalid inputs[0]: Invalid input key 'not valid'. Keys must be valid Python identifiers and not reserved keywords.",
    );
    expect((await call({ inputs: [{ class: 1 }] })).json.error).toContain("Invalid input key 'class'");
    expect((await call({ inputs: [{ a: 1 }], result_variable: '1x' })).json.error).toBe(
      "'result_variable' must be a valid Python identifier",
    );
    expect((await call({ inputs: [{ a: 1 }], timeout: 0 })).json.error).toBe('Timeout must be greater than 0 seconds.');
  });

  it('cancels a running batch; a foreign batch id looks unknown', async () => {
    const r = await alice.call('demo_parallel_execute', {
      code: 'import time\ntime.sleep(30)',
      inputs: [{ a: 1 }, { a: 2 }],
    });
    const foreign = await bob.call('demo_cancel_batch', { batch_id: r.json.batch_id });
    expect(foreign.json).toEqual({ success: false, error: `404: Batch '${r.json.batch_id as string}' not found` });
    const cancelled = await alice.call('demo_cancel_batch', { batch_id: r.json.batch_id });
    expect(cancelled.json).toMatchObject({ status: 'partial_failure', running: 0, failed: 2 });
    expect((cancelled.json.jobs as { status: string }[]).every((j) => j.status === 'cancelled')).toBe(true);
  });
});

describe('async_only mode and restarts', () => {
  it('returns a job handle at once and keeps finished jobs readable after a restart', async () => {
    const first = await startExecutor({ config: { execution: { mode: 'async_only' } } });
    const c = await v2Client(first.mcpUrl, 'auto');
    const r = await c.call('execute_demo_code', { code: "print('hello from a job')\nv = 7" });
    expect(r.json).toMatchObject({
      status: 'running',
      poll_tool: 'demo_check_job',
      message: `Code submitted for background execution. Poll with demo_check_job(job_id='${r.json.job_id as string}').`,
    });
    expect(r.json.promoted).toBeUndefined();
    const done = await waitJob(c, 'demo_check_job', r.json.job_id as string);
    expect(done).toMatchObject({ status: 'completed', success: true, stdout: 'hello from a job\n' });
    const next = await c.call('execute_demo_code', { code: 'print(v)', execution_session_id: r.json.session_id });
    expect((await waitJob(c, 'demo_check_job', next.json.job_id as string)).stdout).toBe('7\n');
    const slow = await c.call('execute_demo_code', { code: 'import time; time.sleep(60)' });
    await c.close();
    await first.stop('SIGKILL');

    const second = await startExecutor({
      dataDir: first.dataDir,
      port: first.port,
      config: { execution: { mode: 'async_only' } },
    });
    const c2 = await v2Client(second.mcpUrl, 'auto');
    const old = await c2.call('demo_check_job', { job_id: r.json.job_id });
    const orphan = await c2.call('demo_check_job', { job_id: slow.json.job_id });
    await c2.close();
    await second.stop();
    expect(old.json).toMatchObject({ status: 'completed', stdout: 'hello from a job\n' });
    expect(orphan.json).toMatchObject({ status: 'failed', success: false });
    expect(orphan.json.error).toContain('The executor stopped while this job was running');
  });
});
