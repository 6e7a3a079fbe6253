/**
 * async-job: submit → completed for trivial work, on the BullMQ and in-process job backends, in one run.
 *
 * Part 1 (job port alone, in the bench process): `enqueue` → the processor has finished a no-op job,
 * InProcessJobQueue vs BullMqJobQueue (Redis), sequential, interleaved round by round.
 *
 * Part 2 (end to end over MCP, three executors):
 *   - `sync`: execute_demo_code("x = 1") on a warm session, inline (execution.mode sync) — the baseline;
 *   - `async-in-process` / `async-bullmq`: the same call in async_only mode, then demo_check_job polled
 *     (2 ms gap) until it first says `completed`. Session-bound jobs run on the replica holding the
 *     kernel and never go through the queue, so the two backends differ only in the jobs' records.
 *   - `batch-in-process` / `batch-bullmq`: a one-item demo_parallel_execute, then demo_check_batch polled
 *     until `completed`. Batch items do go through the queue (and start a fresh kernel each); their
 *     baseline is `sync-new-session`: execute_demo_code("x = 1") with no session id (new session + kernel
 *     start + run), inline. Closing the sessions afterwards is not timed.
 */
import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { BullMqJobQueue, InProcessJobQueue, type JobProcessor, type JobQueue } from '@stoa/jobs';
import { type RunningExecutor, startExecutor } from '../test/support/executor-process';
import {
  emit,
  emitFigures,
  note,
  noteLoadAverage,
  quietNestLogger,
  rounds,
  summarize,
  type Summary,
  runBench,
} from './lib/bench';
import {
  adminBatchTimes,
  BENCH_REDIS_URL,
  dropRedisPrefix,
  openRedisSockets,
  pollBatch,
  sleep,
  uniquePrefix,
} from './lib/jobs';
import { type BenchClient, connect } from './lib/mcp';

const BENCH = 'async-job';
const PORT_WARMUP = rounds(30, 1);
const PORT_SAMPLES = rounds(300, 3);
const JOB_WARMUP = rounds(10, 1);
const JOB_SAMPLES = rounds(100, 2);
const BATCH_WARMUP = rounds(3, 1);
const BATCH_SAMPLES = rounds(50, 2);
const POLL_GAP_MS = 2;
const GOAL_PORT_BULLMQ_P50_MS = 10;

const r3 = (n: number): number => Number(n.toFixed(3));

/** Rotating interleave: round i runs the subjects starting at index i. */
async function interleave<K extends string>(
  what: string,
  subjects: Record<K, () => Promise<number>>,
  warmup: number,
  samples: number,
): Promise<Record<K, number[]>> {
  const names = Object.keys(subjects) as K[];
  const out = Object.fromEntries(names.map((n) => [n, [] as number[]])) as Record<K, number[]>;
  note(`${what}: warm-up ${warmup} rounds, then ${samples} measured rounds (${names.join(' / ')}, interleaved)`);
  for (let i = 0; i < warmup + samples; i++) {
    for (let j = 0; j < names.length; j++) {
      const name = names[(i + j) % names.length] as K;
      const ms = await subjects[name]();
      if (i >= warmup) out[name].push(ms);
    }
  }
  return out;
}

// ---------------------------------------------------------------- part 1: the job port alone

async function portLayer(prefix: string): Promise<void> {
  const lost: string[] = [];
  const inProcess = new InProcessJobQueue();
  const bullmq = new BullMqJobQueue({
    url: BENCH_REDIS_URL,
    prefix,
    lockDurationMs: 30_000,
    stalledIntervalMs: 30_000,
    onLost: (id, why) => lost.push(`${id}: ${why}`),
  });
  await bullmq.init();
  const queue = 'noop';
  const waiters = new Map<string, { expect: number; resolve: (t: number) => void; reject: (e: Error) => void }>();
  // The no-op processor: checks the payload, then reports the moment it finishes.
  const processor: JobProcessor = (jobId, data) => {
    const w = waiters.get(jobId);
    if (!w) throw new Error(`unexpected job ${jobId}`);
    waiters.delete(jobId);
    if (data.i !== w.expect) w.reject(new Error(`job ${jobId}: data.i = ${String(data.i)}, expected ${w.expect}`));
    else w.resolve(performance.now());
    return Promise.resolve();
  };
  await inProcess.process(queue, 1, processor);
  await bullmq.process(queue, 1, processor);

  const enqueueReturned: number[] = [];
  let seq = 0;
  const oneJob = (q: JobQueue) => async (): Promise<number> => {
    const i = seq++;
    const jobId = `bench_${q.backend}_${i}`; // BullMQ refuses integer-looking custom ids
    const finished = new Promise<number>((resolve, reject) => waiters.set(jobId, { expect: i, resolve, reject }));
    const t0 = performance.now();
    await q.enqueue(queue, jobId, { i });
    const tEnq = performance.now();
    const t1 = await Promise.race([
      finished,
      sleep(10_000).then(() => Promise.reject(new Error(`${q.backend}: job ${jobId} not processed within 10 s`))),
    ]);
    if (q.backend === 'bullmq') enqueueReturned.push(tEnq - t0);
    return t1 - t0;
  };
  try {
    const s = await interleave(
      'job port',
      { 'port-in-process': oneJob(inProcess), 'port-bullmq': oneJob(bullmq) },
      PORT_WARMUP,
      PORT_SAMPLES,
    );
    if (lost.length) throw new Error(`BullMQ gave up jobs: ${lost.join('; ')}`);
    const inp = summarize(s['port-in-process']);
    const bull = summarize(s['port-bullmq']);
    const enq = summarize(enqueueReturned.slice(-PORT_SAMPLES));
    emitFigures(BENCH, 'port-in-process', inp);
    emitFigures(BENCH, 'port-bullmq', bull, { name: 'port-in-process', summary: inp });
    // goal_max on this line applies to value (ms), not to the ratio.
    emit({
      bench: BENCH,
      subject: 'port-bullmq',
      metric: 'p50_ms',
      value: r3(bull.p50_ms),
      n: bull.n,
      goal_max: GOAL_PORT_BULLMQ_P50_MS,
    });
    emitFigures(BENCH, 'port-bullmq-enqueue-call', enq);
  } finally {
    await bullmq.close();
    await inProcess.close();
    await sleep(300); // let disconnect() settle
    const open = openRedisSockets(BENCH_REDIS_URL);
    if (open)
      note(
        `BullMqJobQueue.close() left ${open} Redis connection(s) open (the ones passed to its Queue/Worker); main() exits explicitly`,
      );
  }
}

// ---------------------------------------------------------------- part 2: end to end over MCP

interface ExecResult {
  success?: boolean;
  stdout?: string;
  session_id?: string;
  job_id?: string;
  status?: string;
  poll_tool?: string;
}

/** Runs `code` in async_only mode and waits for the job; returns the session id. */
async function asyncRun(
  client: BenchClient,
  code: string,
  sessionId?: string,
): Promise<{ sessionId: string; polls: number; submitMs: number }> {
  const t0 = performance.now();
  const h = JSON.parse(
    await client.call('execute_demo_code', { code, ...(sessionId ? { execution_session_id: sessionId } : {}) }),
  ) as ExecResult;
  const submitMs = performance.now() - t0;
  if (h.status !== 'running' || !h.job_id || h.poll_tool !== 'demo_check_job' || !h.session_id)
    throw new Error(`not a job handle: ${JSON.stringify(h)}`);
  if (sessionId && h.session_id !== sessionId) throw new Error(`job ran in ${h.session_id}, not ${sessionId}`);
  const deadline = performance.now() + 20_000;
  for (let polls = 1; ; polls++) {
    const j = JSON.parse(await client.call('demo_check_job', { job_id: h.job_id })) as ExecResult;
    if (j.status === 'completed') {
      if (!j.success || j.session_id !== h.session_id)
        throw new Error(`job ${h.job_id} completed badly: ${JSON.stringify(j)}`);
      return { sessionId: h.session_id, polls, submitMs };
    }
    if (j.status !== 'running') throw new Error(`job ${h.job_id} ended ${j.status}: ${JSON.stringify(j)}`);
    if (performance.now() > deadline) throw new Error(`job ${h.job_id} still running after 20 s`);
    await sleep(POLL_GAP_MS);
  }
}

function emitPair(subject: string, s: Summary, baseline: string, b: Summary): void {
  emitFigures(BENCH, subject, s, { name: baseline, summary: b });
  emit({ bench: BENCH, subject, metric: 'p50_added_ms', value: r3(s.p50_ms - b.p50_ms), n: s.n, baseline });
}

/**
 * The figures of one comparison: the baseline's, each backend's against it (with the ms it adds), then
 * BullMQ's against in-process.
 */
function emitBackends<K extends string>(samples: Record<K, number[]>, baseline: K, inProcess: K, bullmq: K): void {
  const base = summarize(samples[baseline]);
  const inp = summarize(samples[inProcess]);
  const bull = summarize(samples[bullmq]);
  emitFigures(BENCH, baseline, base);
  emitPair(inProcess, inp, baseline, base);
  emitPair(bullmq, bull, baseline, base);
  emitFigures(BENCH, bullmq, bull, { name: inProcess, summary: inp });
}

/** `started` collects the executors it starts (stopped here; the caller removes their directories). */
async function mcpLayer(prefix: string, started: RunningExecutor[]): Promise<void> {
  const start = async (label: string, config: Record<string, unknown>) => {
    const ex = await startExecutor({ config });
    started.push(ex);
    note(`executor ${label}: ${ex.url} ${JSON.stringify(config)}`);
    return ex;
  };
  try {
    const exSync = await start('sync', { execution: { mode: 'sync' } });
    const exInp = await start('async in-process', { execution: { mode: 'async_only' } });
    const exBull = await start('async bullmq', {
      execution: { mode: 'async_only' },
      jobs: { redis_url: BENCH_REDIS_URL, prefix },
    });
    const [cSync, cInp, cBull] = await Promise.all([
      connect(exSync.mcpUrl),
      connect(exInp.mcpUrl),
      connect(exBull.mcpUrl),
    ]);
    const clients = [cSync, cInp, cBull];

    // Warm sessions: one per executor, created before the rounds.
    const syncCreated = JSON.parse(await cSync.call('execute_demo_code', { code: 'x = 0' })) as ExecResult;
    if (!syncCreated.success || !syncCreated.session_id)
      throw new Error(`sync session: ${JSON.stringify(syncCreated)}`);
    const syncSession = syncCreated.session_id;
    const inpSession = (await asyncRun(cInp, 'x = 0')).sessionId;
    const bullSession = (await asyncRun(cBull, 'x = 0')).sessionId;

    const polls: Record<string, number[]> = {};
    const submits: Record<string, number[]> = {};
    const track = (k: string, p: number, s: number) => {
      (polls[k] ??= []).push(p);
      (submits[k] ??= []).push(s);
    };
    const jobSubject = (label: string, c: BenchClient, sid: string) => async () => {
      const t0 = performance.now();
      const r = await asyncRun(c, 'x = 1', sid);
      const ms = performance.now() - t0;
      track(label, r.polls, r.submitMs);
      return ms;
    };
    const warm = await interleave(
      'warm-session jobs',
      {
        sync: async () => {
          const t0 = performance.now();
          const r = JSON.parse(
            await cSync.call('execute_demo_code', { code: 'x = 1', execution_session_id: syncSession }),
          ) as ExecResult;
          const ms = performance.now() - t0;
          if (!r.success || r.session_id !== syncSession || r.job_id)
            throw new Error(`sync execute: ${JSON.stringify(r)}`);
          return ms;
        },
        'async-in-process': jobSubject('async-in-process', cInp, inpSession),
        'async-bullmq': jobSubject('async-bullmq', cBull, bullSession),
      },
      JOB_WARMUP,
      JOB_SAMPLES,
    );

    let seq = 0;
    // Per item, from the admin API (executor clock): queued → claimed, claimed → finished, finished → seen.
    const phases: Record<string, { queued: number[]; run: number[]; seen: number[]; exec: number[] }> = {};
    const batchSubject = (label: string, c: BenchClient, ex: RunningExecutor) => async () => {
      const n = seq++;
      const t0 = performance.now();
      const b = JSON.parse(await c.call('demo_parallel_execute', { code: 'result = n + 1', inputs: [{ n }] })) as {
        batch_id?: string;
      };
      if (!b.batch_id) throw new Error(`parallel_execute: ${JSON.stringify(b)}`);
      const submitMs = performance.now() - t0;
      const { view, polls: p } = await pollBatch(c, b.batch_id, POLL_GAP_MS, 30_000);
      const ms = performance.now() - t0;
      const seenAt = Date.now();
      const item = view.jobs[0];
      if (view.status !== 'completed' || view.completed !== 1 || view.jobs.length !== 1 || item?.result !== n + 1)
        throw new Error(`batch ${b.batch_id}: ${JSON.stringify(view)}`);
      track(label, p, submitMs);
      const [rec] = await adminBatchTimes(ex.url, b.batch_id);
      if (!rec?.startedAt || !rec.completedAt)
        throw new Error(`batch ${b.batch_id}: admin record without start/end: ${JSON.stringify(rec)}`);
      const ph = (phases[label] ??= { queued: [], run: [], seen: [], exec: [] });
      ph.queued.push(rec.startedAt - rec.createdAt);
      ph.run.push(rec.completedAt - rec.startedAt);
      ph.seen.push(seenAt - rec.completedAt);
      ph.exec.push((item.execution?.execution_time ?? NaN) * 1000);
      return ms;
    };
    const closeSession = async (c: BenchClient, id: string) => {
      const r = JSON.parse(await c.call('demo_close_session', { session_id: id })) as { success?: boolean };
      if (!r.success) throw new Error(`could not close ${id}`);
    };
    const batch = await interleave(
      'one-item batches',
      {
        'sync-new-session': async () => {
          const t0 = performance.now();
          const r = JSON.parse(await cSync.call('execute_demo_code', { code: 'x = 1' })) as ExecResult;
          const ms = performance.now() - t0;
          if (!r.success || !r.session_id || r.session_id === syncSession)
            throw new Error(`new-session execute: ${JSON.stringify(r)}`);
          await closeSession(cSync, r.session_id);
          return ms;
        },
        'batch-in-process': batchSubject('batch-in-process', cInp, exInp),
        'batch-bullmq': batchSubject('batch-bullmq', cBull, exBull),
      },
      BATCH_WARMUP,
      BATCH_SAMPLES,
    );
    // Every demo_parallel_execute from a stateless client creates a parent session (no kernel) that stays live.
    for (const [c, label] of [
      [cInp, 'in-process'],
      [cBull, 'bullmq'],
    ] as const) {
      const live = (JSON.parse(await c.call('demo_list_sessions', { summary_only: true })) as { count: number }).count;
      note(
        `${label}: ${live} live sessions after ${BATCH_WARMUP + BATCH_SAMPLES} one-item batches (1 warm session + one parent per batch)`,
      );
    }
    // A stateless client's batch has a parent id but no live session (batches never fill the session cap): nothing to close.

    for (const [k, v] of Object.entries(polls)) {
      const mean = (a: number[]) => a.reduce((x, y) => x + y, 0) / a.length;
      note(
        `${k}: submit call p50 ${summarize(submits[k] as number[]).p50_ms.toFixed(2)} ms, ${mean(v).toFixed(1)} polls on average (incl. warm-up)`,
      );
    }
    for (const [k, ph] of Object.entries(phases)) {
      const p50 = (a: number[]) => summarize(a.slice(-BATCH_SAMPLES)).p50_ms.toFixed(0);
      note(
        `${k} (p50, executor clock, ms resolution): created→claimed ${p50(ph.queued)} ms, claimed→finished ${p50(ph.run)} ms (of which execution_time ${p50(ph.exec)} ms), finished→seen by the poller ${p50(ph.seen)} ms`,
      );
    }

    emitBackends(warm, 'sync', 'async-in-process', 'async-bullmq');
    emitBackends(batch, 'sync-new-session', 'batch-in-process', 'batch-bullmq');
    await Promise.all(clients.map((c) => c.close()));
  } catch (err) {
    for (const ex of started) note(`executor ${ex.url} logs:\n${ex.logs()}`);
    throw err;
  } finally {
    await Promise.all(started.map((ex) => ex.stop()));
  }
}

async function main(): Promise<void> {
  quietNestLogger();
  noteLoadAverage();
  const portPrefix = uniquePrefix('port');
  const exPrefix = uniquePrefix('async');
  const executors: RunningExecutor[] = [];
  try {
    await portLayer(portPrefix);
    await mcpLayer(exPrefix, executors);
  } finally {
    for (const ex of executors) rmSync(dirname(ex.dataDir), { recursive: true, force: true });
    for (const p of [portPrefix, exPrefix])
      note(`redis: ${await dropRedisPrefix(BENCH_REDIS_URL, p)} keys under ${p}: deleted`);
  }
}

runBench(BENCH, main);
