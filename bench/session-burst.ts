/**
 * session-burst: new sessions back to back, as an agent fleet opening work at once — bursts of 12 and 50
 * `execute_demo_code` calls without a session id, one after another (client-observed latency of each), on two
 * executors in the same run: the default adaptive warm pool (warm_pool 2, warm_pool_max 16) and a fixed pool of 2
 * (warm_pool_max 0, what every pool was before). Between bursts the sessions are closed and each pool is left to
 * refill to its own target (not timed). The first burst of each size teaches the adaptive pool and is reported
 * apart (`-first`); the figures are the bursts after it, when the same demand comes again.
 */
import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { type RunningExecutor, startExecutor } from '../test/support/executor-process';
import { emitFigures, note, noteLoadAverage, quietNestLogger, rounds, SMOKE, summarize, runBench } from './lib/bench';
import { connect } from './lib/mcp';

const BENCH = 'session-burst';
const BURSTS = rounds(3, 1);
const SIZES = SMOKE ? [4] : [12, 50];

interface Pool {
  ready: number;
  target: number;
  starting: number;
}

async function pool(ex: RunningExecutor): Promise<Pool> {
  return ((await (await fetch(`${ex.url}/health`)).json()) as { warm_pool: Pool }).warm_pool;
}

/** Waits until the pool holds its target and starts nothing more (a refill that stalls fails the bench). */
async function settled(ex: RunningExecutor): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const p = await pool(ex);
    if (p.ready >= p.target && p.starting === 0) return;
    if (Date.now() > deadline) throw new Error(`warm pool did not refill: ${JSON.stringify(p)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function main(): Promise<void> {
  quietNestLogger();
  noteLoadAverage();
  const config = (max: number) => ({ sessions: { warm_pool: 2, warm_pool_max: max, max_sessions: 200 } });
  const executors = {
    adaptive: await startExecutor({ config: config(16) }),
    fixed: await startExecutor({ config: config(0) }),
  };
  try {
    const clients = {
      adaptive: await connect(executors.adaptive.mcpUrl),
      fixed: await connect(executors.fixed.mcpUrl),
    };
    for (const size of SIZES) {
      const samples = { adaptive: [] as number[], fixed: [] as number[] };
      const first = { adaptive: [] as number[], fixed: [] as number[] };
      for (let b = 0; b <= BURSTS; b++) {
        for (const name of ['adaptive', 'fixed'] as const) {
          await settled(executors[name]);
          const ids: string[] = [];
          for (let i = 0; i < size; i++) {
            const t0 = performance.now();
            const text = await clients[name].call('execute_demo_code', { code: '1+1' });
            const ms = performance.now() - t0;
            const r = JSON.parse(text) as { stdout?: string; session_id?: string };
            if (r.stdout !== '2\n' || !r.session_id) throw new Error(`${name}: unexpected execute result: ${text}`);
            ids.push(r.session_id);
            (b === 0 ? first : samples)[name].push(ms);
          }
          for (const id of ids) await clients[name].call('demo_close_session', { session_id: id });
          if (b === BURSTS) note(`${name} after the ${size}-bursts: ${JSON.stringify(await pool(executors[name]))}`);
        }
      }
      const fixed = summarize(samples.fixed);
      emitFigures(BENCH, `fixed-${size}`, fixed);
      emitFigures(BENCH, `adaptive-${size}-first`, summarize(first.adaptive), {
        name: `fixed-${size}`,
        summary: fixed,
      });
      emitFigures(BENCH, `adaptive-${size}`, summarize(samples.adaptive), { name: `fixed-${size}`, summary: fixed });
    }
    await Promise.all(Object.values(clients).map((c) => c.close()));
  } finally {
    for (const ex of Object.values(executors)) {
      await ex.stop();
      rmSync(dirname(ex.dataDir), { recursive: true, force: true });
    }
  }
}

runBench(BENCH, main);
