/** Kernel and interpreter baselines of the benches: a direct KernelService, the real Python, a bare spawn. */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KernelService } from '@stoa/kernel';

/**
 * The KernelService of a bench's direct-kernel subject: `python`, an empty environment, the default (secure)
 * sandbox and a fresh data dir, as an executor would start kernels with no extra config.
 */
/** The interpreter of the benches' kernels and baselines: BENCH_PYTHON (e.g. /usr/bin/python3), else `python3`. */
const BENCH_PYTHON = process.env.BENCH_PYTHON || 'python3';

export function benchKernels(python = BENCH_PYTHON): KernelService {
  return new KernelService({
    python,
    env: {},
    passthroughEnv: [],
    startTimeoutMs: 20_000,
    dataDir: mkdtempSync(join(tmpdir(), 'stoa-kernels-')),
  });
}

/** The real interpreter behind `python` (no pyenv shim or other wrapper in the measured spawn). */
export function realPython(python = BENCH_PYTHON): string {
  return execFileSync(python, ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim();
}

/** Spawns `exe args` directly (no shell) and resolves when it exits 0. */
export function runToExit(exe: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(exe, args, { stdio: 'ignore' });
    child.once('error', reject);
    child.once('exit', (code, signal) =>
      code === 0 ? resolve() : reject(new Error(`${exe} exited with ${signal ?? code}`)),
    );
  });
}

/** A bare Python echoing lines over a pipe: the floor of any out-of-process kernel's round trip. */
export function pipeEcho(python = 'python3'): { roundTrip: () => Promise<void>; close: () => void } {
  const child = spawn(python, ['-u', '-c', 'import sys\nfor line in sys.stdin:\n    sys.stdout.write(line)'], {
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  let waiting: (() => void) | undefined;
  child.stdout.on('data', () => waiting?.());
  return {
    roundTrip: () =>
      new Promise<void>((resolve) => {
        waiting = resolve;
        child.stdin.write('x\n');
      }),
    close: () => child.kill(),
  };
}
