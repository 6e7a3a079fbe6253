/**
 * activity-overhead: execute round trip (`x+1` on a warm session over MCP) on three executors in one run —
 * publishing off (baseline), publishing to a running activity app, and publishing to a URL where nothing
 * listens — interleaved call by call so machine noise hits them alike. Goal: on (up or down) ≤ 1.05× off.
 */
import { startActivity, TEST_WRITER_SECRET } from '../test/support/activity';
import { startExecutor, type RunningExecutor } from '../test/support/executor-process';
import { freePort } from '../test/support/ports';
import { emitFigures, quietNestLogger, rounds, runBench, summarize } from './lib/bench';
import { executeSubject, interleavedExecute, type ExecuteSubject } from './lib/execute-rounds';

const BENCH = 'activity-overhead';
const WARMUP = rounds(50, 1);
const SAMPLES = rounds(300, 3);

async function main(): Promise<void> {
  quietNestLogger();
  const activity = await startActivity();
  const dead = `http://127.0.0.1:${await freePort()}`;
  const publish = (url: string) => ({ ACTIVITY_UI_URL: url, ACTIVITY_UI_SECRET: TEST_WRITER_SECRET });
  const envs = { off: {}, ui_up: publish(activity.url), ui_down: publish(dead) };
  const executors: RunningExecutor[] = [];
  try {
    const subjects: Record<string, ExecuteSubject> = {};
    for (const [name, env] of Object.entries(envs)) {
      const ex = await startExecutor({ env });
      executors.push(ex);
      subjects[name] = await executeSubject(ex.mcpUrl);
    }
    const samples = await interleavedExecute(subjects, WARMUP, SAMPLES);
    const off = summarize(samples.off!);
    emitFigures(BENCH, 'publisher_off', off);
    for (const name of ['ui_up', 'ui_down'])
      emitFigures(BENCH, `publisher_on_${name}`, summarize(samples[name]!), {
        name: 'publisher_off',
        summary: off,
        goalMax: 1.05,
      });
    for (const s of Object.values(subjects)) await s.client.close();
  } finally {
    for (const ex of executors) await ex.stop();
    await activity.stop();
  }
}

runBench(BENCH, main);
