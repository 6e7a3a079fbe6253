/**
 * session-start: the first execute of a NEW session over MCP (no execution_session_id → session
 * created, kernel started, code run), next to a bare `python -c pass` (spawn → exit) and a direct
 * KernelService.start (spawn → driver ready), measured interleaved in the same run.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { KernelService } from '@stoa/kernel';
import { startExecutor } from '../test/support/executor-process';
import { emitFigures, note, quietNestLogger, summarize, runBench } from './lib/bench';
import { connect } from './lib/mcp';

const BENCH = 'session-start';
const WARMUP = 3;
const SAMPLES = 40;

/** The real interpreter behind `python3` (no pyenv shim or other wrapper in the measured spawn). */
function realPython(): string {
  return execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim();
}

function runToExit(exe: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(exe, args, { stdio: 'ignore' });
    child.once('error', reject);
    child.once('exit', (code, signal) => (code === 0 ? resolve() : reject(new Error(`${exe} exited with ${signal ?? code}`))));
  });
}

async function main(): Promise<void> {
  quietNestLogger();
  const python = realPython();
  note(`python: ${python}`);
  const executor = await startExecutor();
  const kernels = new KernelService({ python: 'python3', env: {}, passthroughEnv: [], startTimeoutMs: 20_000 });
  const cwd = mkdtempSync(join(tmpdir(), 'stoa-bench-'));
  const scratch = [cwd];
  try {
    const client = await connect(executor.mcpUrl);

    // Each subject returns its measured ms; clean-up (closing the session / kernel) is not timed.
    const subjects = {
      'new-session-execute': async () => {
        const t0 = performance.now();
        const text = await client.call('execute_demo_code', { code: '1+1' });
        const ms = performance.now() - t0;
        const r = JSON.parse(text) as { stdout?: string; session_id?: string };
        if (r.stdout !== '2\n' || !r.session_id) throw new Error(`unexpected execute result: ${text}`);
        const closed = JSON.parse(await client.call('demo_close_session', { session_id: r.session_id })) as { success?: boolean };
        if (!closed.success) throw new Error(`could not close ${r.session_id}`);
        return ms;
      },
      'python-spawn': async () => {
        const t0 = performance.now();
        await runToExit(python, ['-c', 'pass']);
        return performance.now() - t0;
      },
      'kernel-start': async () => {
        const t0 = performance.now();
        const kernel = await kernels.start({ cwd, env: {}, label: 'bench' });
        const ms = performance.now() - t0;
        await kernel.close();
        return ms;
      },
    };
    const names = Object.keys(subjects) as (keyof typeof subjects)[];
    const samples = Object.fromEntries(names.map((n) => [n, [] as number[]])) as Record<keyof typeof subjects, number[]>;

    note(`warm-up ${WARMUP} rounds, then ${SAMPLES} measured rounds (new session / python spawn / kernel start, interleaved)`);
    for (let i = 0; i < WARMUP + SAMPLES; i++) {
      for (let j = 0; j < names.length; j++) {
        const name = names[(i + j) % names.length] as keyof typeof subjects;
        const ms = await subjects[name]();
        if (i >= WARMUP) samples[name].push(ms);
      }
    }

    const session = summarize(samples['new-session-execute']);
    const spawnPy = summarize(samples['python-spawn']);
    const kernelStart = summarize(samples['kernel-start']);
    emitFigures(BENCH, 'python-spawn', spawnPy);
    emitFigures(BENCH, 'kernel-start', kernelStart, { name: 'python-spawn', summary: spawnPy });
    emitFigures(BENCH, 'new-session-execute', session, { name: 'python-spawn', summary: spawnPy });
    emitFigures(BENCH, 'new-session-execute', session, { name: 'kernel-start', summary: kernelStart });
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
