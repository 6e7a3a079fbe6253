/**
 * dispatcher-spread: 300 new sessions through a dispatcher over 3 workers weighted 1:2:1 — where they land (read
 * from the replica each session id carries) against the weights, and what a new session costs through the
 * dispatcher next to the same call straight to a worker.
 */
import { startExecutor, type RunningExecutor } from '../test/support/executor-process';
import { startDispatcher } from '../test/support/router-process';
import { emit, emitFigures, note, rounds, runBench, SMOKE, summarize } from './lib/bench';
import { connect } from './lib/mcp';

const BENCH = 'dispatcher-spread';
const SESSIONS = rounds(300, 8);
const WEIGHTS = [1, 2, 1];
const KEY = 'bench-dispatcher-key-0123456789abcdef';

async function main(): Promise<void> {
  // One after another: three executors starting at once on a busy 2-core machine can miss the harness's 30 s start bound.
  const workers: RunningExecutor[] = [];
  for (let i = 0; i < WEIGHTS.length; i++) {
    workers.push(
      await startExecutor({
        config: {
          sessions: {
            replica: `r${i + 1}`,
            id_signing_key: KEY,
            warm_pool: SMOKE ? 0 : 2,
            max_sessions: SESSIONS + 50,
          },
        },
      }),
    );
  }
  const dispatcher = await startDispatcher({
    workers: workers.map((w, i) => ({ name: `w${i + 1}`, url: w.url, weight: WEIGHTS[i] })),
    worker_auth: { mode: 'passthrough', audience: 'dev' },
    session_key: KEY,
  });
  try {
    const via = await connect(dispatcher.mcpUrl);
    const direct = await connect(workers[1]!.mcpUrl);
    const counts: Record<string, number> = {};
    const routed: number[] = [];
    const straight: number[] = [];
    note(`${SESSIONS} new sessions through the dispatcher, each followed by one straight to a worker`);
    for (let i = 0; i < SESSIONS; i++) {
      let t0 = performance.now();
      const r = JSON.parse(await via.call('execute_demo_code', { code: '1' })) as { session_id: string };
      routed.push(performance.now() - t0);
      const replica = Buffer.from(r.session_id.split('.')[1] ?? '', 'base64url').toString();
      counts[replica] = (counts[replica] ?? 0) + 1;
      await via.call('demo_close_session', { session_id: r.session_id });
      t0 = performance.now();
      const d = JSON.parse(await direct.call('execute_demo_code', { code: '1' })) as { session_id: string };
      straight.push(performance.now() - t0);
      await direct.call('demo_close_session', { session_id: d.session_id });
    }
    const total = WEIGHTS.reduce((a, b) => a + b, 0);
    WEIGHTS.forEach((w, i) => {
      const got = counts[`r${i + 1}`] ?? 0;
      emit({
        bench: BENCH,
        subject: `w${i + 1}`,
        metric: 'share',
        value: Math.round((got / SESSIONS) * 1000) / 1000,
        n: got,
        weight: w,
        expected: Math.round((w / total) * 1000) / 1000,
      });
    });
    const base = summarize(straight);
    emitFigures(BENCH, 'new-session-direct', base);
    emitFigures(BENCH, 'new-session-dispatched', summarize(routed), {
      name: 'new-session-direct',
      summary: base,
      goalMax: 1.35,
    });
    await via.close();
    await direct.close();
  } finally {
    await dispatcher.stop();
    await Promise.all(workers.map((w) => w.stop()));
  }
}

runBench(BENCH, main);
