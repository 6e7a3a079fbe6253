/**
 * session-start: the first execute of a NEW session over MCP (no execution_session_id → session
 * created, kernel taken from the warm pool or started, code run) on two executors with the default
 * sandbox (network none, filesystem confined; per-kernel uid when run as root) — one with the warm pool,
 * one without — next to a bare `python -c pass` (spawn → exit) and a direct sandboxed KernelService.start
 * (spawn → driver ready → bootstrap), measured interleaved in the same run. Before each pooled sample the
 * pool is refilled (not timed): the figure is what a new session costs when the pool is keeping up.
 * `kernel-start-loop-block` is the longest the bench process's event loop was blocked during each kernel start
 * (kernels start through the launcher process); its baseline `node-spawn-sync` is how long one
 * `child_process.spawn` (of /bin/true, with a kernel's seven stdio slots) blocks the same process — what every
 * kernel start cost the executor's event loop before the launcher.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { dirname, join } from 'node:path';
import { startExecutor } from '../test/support/executor-process';
import { emitFigures, note, quietNestLogger, rounds, summarize, runBench } from './lib/bench';
import { benchKernels, realPython, runToExit } from './lib/kernels';
import { connect } from './lib/mcp';

const BENCH = 'session-start';
const WARMUP = rounds(3, 1);
const SAMPLES = rounds(40, 2);

async function main(): Promise<void> {
  quietNestLogger();
  const python = realPython();
  note(`python: ${python}`);
  // BENCH_PYTHON picks the interpreter for every subject (default python3), e.g. /usr/bin/python3.
  const environment = { python };
  const executor = await startExecutor({ config: { environment, sessions: { warm_pool: 2 } } });
  const cold = await startExecutor({ config: { environment, sessions: { warm_pool: 0 } } });
  const kernels = benchKernels(python);
  const cwd = mkdtempSync(join(tmpdir(), 'stoa-bench-'));
  const scratch = [cwd];
  /** Per kernel start, warm-up ones included: the longest event-loop delay (ms). */
  const loopBlocks: number[] = [];
  try {
    const client = await connect(executor.mcpUrl);
    const coldClient = await connect(cold.mcpUrl);
    const poolFull = async () => {
      for (;;) {
        const h = (await (await fetch(`${executor.url}/health`)).json()) as {
          warm_pool: { ready: number; target: number; starting: number };
        };
        if (h.warm_pool.ready >= h.warm_pool.target && h.warm_pool.starting === 0) return;
        await new Promise((r) => setTimeout(r, 5));
      }
    };
    const newSession = async (c: typeof client) => {
      const t0 = performance.now();
      const text = await c.call('execute_demo_code', { code: '1+1' });
      const ms = performance.now() - t0;
      const r = JSON.parse(text) as { stdout?: string; session_id?: string };
      if (r.stdout !== '2\n' || !r.session_id) throw new Error(`unexpected execute result: ${text}`);
      const closed = JSON.parse(await c.call('demo_close_session', { session_id: r.session_id })) as {
        success?: boolean;
      };
      if (!closed.success) throw new Error(`could not close ${r.session_id}`);
      return ms;
    };

    // Each subject returns its measured ms; clean-up (closing the session / kernel) is not timed.
    const subjects = {
      'new-session-pool': async () => {
        await poolFull();
        return newSession(client);
      },
      'new-session-no-pool': () => newSession(coldClient),
      'python-spawn': async () => {
        const t0 = performance.now();
        await runToExit(python, ['-c', 'pass']);
        return performance.now() - t0;
      },
      'kernel-start': async () => {
        const loop = monitorEventLoopDelay({ resolution: 1 });
        loop.enable();
        const t0 = performance.now();
        const kernel = await kernels.start(kernels.allocateDirs());
        const ms = performance.now() - t0;
        loop.disable();
        loopBlocks.push(loop.max / 1e6);
        await kernel.close();
        return ms;
      },
      'node-spawn-sync': async () => {
        const t0 = performance.now();
        const child = spawn('/bin/true', [], { stdio: ['ignore', 'pipe', 'pipe', 'pipe', 'pipe', 'pipe', 'pipe'] });
        const ms = performance.now() - t0;
        await once(child, 'close');
        return ms;
      },
    };
    const names = Object.keys(subjects) as (keyof typeof subjects)[];
    const samples = Object.fromEntries(names.map((n) => [n, [] as number[]])) as Record<
      keyof typeof subjects,
      number[]
    >;

    note(
      `warm-up ${WARMUP} rounds, then ${SAMPLES} measured rounds (pooled / unpooled new session, python spawn, kernel start, node spawn; interleaved)`,
    );
    for (let i = 0; i < WARMUP + SAMPLES; i++) {
      for (let j = 0; j < names.length; j++) {
        const name = names[(i + j) % names.length] as keyof typeof subjects;
        const ms = await subjects[name]();
        if (i >= WARMUP) samples[name].push(ms);
      }
    }

    const pooled = summarize(samples['new-session-pool']);
    const unpooled = summarize(samples['new-session-no-pool']);
    const spawnPy = summarize(samples['python-spawn']);
    const kernelStart = summarize(samples['kernel-start']);
    emitFigures(BENCH, 'python-spawn', spawnPy);
    emitFigures(BENCH, 'kernel-start-sandboxed', kernelStart, { name: 'python-spawn', summary: spawnPy });
    emitFigures(BENCH, 'new-session-no-pool', unpooled, { name: 'python-spawn', summary: spawnPy });
    emitFigures(BENCH, 'new-session-pool', pooled, { name: 'python-spawn', summary: spawnPy });
    emitFigures(BENCH, 'new-session-pool', pooled, { name: 'new-session-no-pool', summary: unpooled });
    const spawnSync = summarize(samples['node-spawn-sync']);
    emitFigures(BENCH, 'node-spawn-sync', spawnSync);
    emitFigures(BENCH, 'kernel-start-loop-block', summarize(loopBlocks.slice(WARMUP)), {
      name: 'node-spawn-sync',
      summary: spawnSync,
    });
    note(
      `goals: new-session-pool p50 <= 10 ms (got ${pooled.p50_ms.toFixed(1)}), new-session-no-pool p50 <= 50 ms (got ${unpooled.p50_ms.toFixed(1)})`,
    );
    await client.close();
    await coldClient.close();
  } catch (err) {
    note(`executor logs:\n${executor.logs()}\n${cold.logs()}`);
    throw err;
  } finally {
    await kernels.onApplicationShutdown();
    await executor.stop();
    await cold.stop();
    for (const dir of [dirname(executor.dataDir), dirname(cold.dataDir), ...scratch])
      rmSync(dir, { recursive: true, force: true });
  }
}

runBench(BENCH, main);
