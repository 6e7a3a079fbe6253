/**
 * execute-roundtrip: latency of `execute_demo_code("x+1")` on a warm session over MCP, next to
 * (a) a trivial tool on the same server over the same client (`demo_list_sessions`, touches no kernel),
 * (b) the same code sent straight to a kernel (KernelProcess.execute, no HTTP/MCP) and (c) one line echoed by a bare
 * Python over a pipe (one process wake-up: the floor of any out-of-process hop at this call rate).
 * The four are interleaved call by call (rotating order) so machine noise hits them alike.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ExecutionOutcome } from '@stoa/kernel';
import { startExecutor } from '../test/support/executor-process';
import { TEST_PYTHON } from '../test/support/paths';
import { runPyClient } from '../test/support/py-client';
import { emit, emitFigures, note, quietNestLogger, rounds, summarize, runBench, type Summary } from './lib/bench';
import { benchKernels, pipeEcho, realPython } from './lib/kernels';
import { connect } from './lib/mcp';

const BENCH = 'execute-roundtrip';
const WARMUP = rounds(50, 1);
const SAMPLES = rounds(300, 3);
// What the executor passes for the demo config: default_timeout 300 s, grace 3 s, 50 000 chars.
const KERNEL_OPTS = { timeoutMs: 300_000, graceMs: 3_000, captureChars: 50_000 };

async function main(): Promise<void> {
  quietNestLogger();
  const python = realPython();
  const executor = await startExecutor({ config: { environment: { python } } });
  const kernels = benchKernels(python);
  const cwd = mkdtempSync(join(tmpdir(), 'stoa-bench-'));
  const scratch = [cwd];
  try {
    const client = await connect(executor.mcpUrl);
    const created = JSON.parse(await client.call('execute_demo_code', { code: 'x = 1' })) as {
      session_id?: string;
      success?: boolean;
    };
    if (!created.success || !created.session_id)
      throw new Error(`could not create a session: ${JSON.stringify(created)}`);
    const sessionId = created.session_id;

    const kernel = await kernels.start(kernels.allocateDirs());
    await kernel.execute('x = 1', KERNEL_OPTS);
    const echo = pipeEcho();

    const subjects = {
      execute: async () => {
        const r = JSON.parse(
          await client.call('execute_demo_code', { code: 'x+1', execution_session_id: sessionId }),
        ) as { stdout?: string; session_id?: string };
        return r.stdout === '2\n' && r.session_id === sessionId;
      },
      trivial: async () => {
        const r = JSON.parse(await client.call('demo_list_sessions', { summary_only: true })) as { count?: number };
        return r.count === 1;
      },
      direct: async () => {
        const r = await kernel.execute('x+1', KERNEL_OPTS);
        return r.outcome === ExecutionOutcome.completed && r.stdout.text() === '2\n';
      },
      echo: async () => (await echo.roundTrip(), true),
    };
    const names = Object.keys(subjects) as (keyof typeof subjects)[];
    const samples: Record<keyof typeof subjects, number[]> = {
      execute: [],
      trivial: [],
      direct: [],
      echo: [],
    };

    note(
      `warm-up ${WARMUP} rounds, then ${SAMPLES} measured rounds (execute / trivial tool / direct kernel / pipe echo, interleaved)`,
    );
    for (let i = 0; i < WARMUP + SAMPLES; i++) {
      for (let j = 0; j < names.length; j++) {
        const name = names[(i + j) % names.length] as keyof typeof subjects;
        const t0 = performance.now();
        const ok = await subjects[name]();
        const ms = performance.now() - t0;
        if (!ok) throw new Error(`${name}: unexpected result in round ${i}`);
        if (i >= WARMUP) samples[name].push(ms);
      }
    }

    const execute = summarize(samples.execute);
    const trivial = summarize(samples.trivial);
    const direct = summarize(samples.direct);
    emitFigures(BENCH, 'noop-tool', trivial);
    emitFigures(BENCH, 'direct-kernel', direct);
    emitFigures(BENCH, 'execute', execute, { name: 'noop-tool', summary: trivial, goalMax: 1.15 });
    emitFigures(BENCH, 'execute', execute, { name: 'direct-kernel', summary: direct });
    // What the kernel round trip alone costs here, in wake-ups of a process that was idle: a kernel's round trip
    // wakes the user-code process, then its supervisor (issue 22: only it may write to the host), then the host.
    const wake = summarize(samples.echo);
    emitFigures(BENCH, 'python-pipe-echo-interleaved', wake);
    emitFigures(BENCH, 'direct-kernel', direct, { name: 'python-pipe-echo-interleaved', summary: wake });
    // The best execute / noop-tool ratio an executor could reach that added nothing of its own to the kernel's
    // round trip (noop + direct kernel, p50), and what it does add (execute − noop − direct kernel, p50).
    const emitFloor = (subject: string, noop: Summary, baseline: string): void =>
      emit({
        bench: BENCH,
        subject,
        metric: 'p50_ratio',
        value: Number(((noop.p50_ms + direct.p50_ms) / noop.p50_ms).toFixed(3)),
        baseline,
      });
    emitFloor('execute-floor', trivial, 'noop-tool');
    emit({
      bench: BENCH,
      subject: 'executor-own',
      metric: 'p50_ms',
      value: Number((execute.p50_ms - trivial.p50_ms - direct.p50_ms).toFixed(3)),
    });

    // The kernel alone, back to back (no idle gap for the processes to fall asleep in), next to the floor of any
    // out-of-process kernel: one line echoed by a bare Python over a pipe. Interleaved with MCP calls (above), every
    // hop pays the machine's wake-up latency instead.
    const hot: number[] = [];
    const floor: number[] = [];
    for (let i = 0; i < WARMUP + SAMPLES; i++) {
      let t0 = performance.now();
      if (!(await subjects.direct())) throw new Error(`direct-kernel-hot: unexpected result in round ${i}`);
      if (i >= WARMUP) hot.push(performance.now() - t0);
      t0 = performance.now();
      await echo.roundTrip();
      if (i >= WARMUP) floor.push(performance.now() - t0);
    }
    echo.close();
    const pipe = summarize(floor);
    emitFigures(BENCH, 'python-pipe-echo', pipe);
    emitFigures(BENCH, 'direct-kernel-hot', summarize(hot), { name: 'python-pipe-echo', summary: pipe });

    // The same comparison through an independent client with less overhead of its own: Python `mcp` 2.3, in both
    // of its modes (2025-era MCP session, and the 2026-07-28 stateless envelope that `auto` negotiates here).
    if (!existsSync(TEST_PYTHON)) {
      note(`no Python mcp client at ${TEST_PYTHON} (npm test creates it): the py-* figures are left out`);
    } else {
      for (const mode of ['legacy', 'auto'] as const) {
        const py = await runPyClient<{ execute: number[]; noop: number[] }>(
          'py_roundtrip.py',
          { url: executor.mcpUrl, mode, session_id: sessionId, warmup: WARMUP, samples: SAMPLES },
          `python mcp client (${mode})`,
          join(__dirname, 'lib'),
        );
        const noop = summarize(py.noop);
        emitFigures(BENCH, `py-${mode}/noop-tool`, noop);
        emitFigures(BENCH, `py-${mode}/execute`, summarize(py.execute), {
          name: `py-${mode}/noop-tool`,
          summary: noop,
          goalMax: 1.3,
        });
        // As execute-floor above, for this client: its no-op plus the kernel's round trip (direct-kernel, measured
        // interleaved above at a similar call rate), over its no-op.
        emitFloor(`py-${mode}/execute-floor`, noop, `py-${mode}/noop-tool`);
      }
    }
    await client.close();
  } catch (err) {
    note(`executor logs:\n${executor.logs()}`);
    throw err;
  } finally {
    await kernels.onApplicationShutdown();
    await executor.stop();
    for (const dir of [dirname(executor.dataDir), ...scratch]) rmSync(dir, { recursive: true, force: true });
  }
}

runBench(BENCH, main);
