import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// Runs the stdlib unittest suites of the kernel-side Python modules (libs/kernel/python) under python3, and the
// suites of what every kernel start imports under the system's /usr/bin/python3 too (another build of CPython).
const pythonDir = resolve(__dirname, '../python');

function runSuite(pattern: string, python = 'python3'): { status: number; output: string } {
  const args = ['-B', '-m', 'unittest', 'discover', '-s', pythonDir, '-t', pythonDir, '-p', pattern];
  try {
    const output = execFileSync(python, args, {
      cwd: pythonDir,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 30_000,
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
    });
    return { status: 0, output };
  } catch (error) {
    const e = error as { status?: number | null; stdout?: string; stderr?: string };
    return { status: e.status ?? 1, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

describe('kernel-side Python modules (unittest suites)', () => {
  it('stoa_screen.py passes its suite', () => {
    const r = runSuite('test_stoa_screen.py');
    expect(r.status, r.output).toBe(0);
  });

  it('stoa_supervisor.py passes its suite', () => {
    const r = runSuite('test_stoa_supervisor.py');
    expect(r.status, r.output).toBe(0);
  });

  it('stoa_launcher.py passes its suite', () => {
    const r = runSuite('test_stoa_launcher.py');
    expect(r.status, r.output).toBe(0);
  });

  it('stoa_transfer.py passes its suite', () => {
    const r = runSuite('test_stoa_transfer.py');
    expect(r.status, r.output).toBe(0);
  });

  it('stoa_lean.py passes its suite', () => {
    const r = runSuite('test_stoa_lean.py');
    expect(r.status, r.output).toBe(0);
  });

  it('stoa_lean.py and the start-imports check pass under /usr/bin/python3', () => {
    for (const suite of ['test_stoa_lean.py', 'test_stoa_launcher.py']) {
      const r = runSuite(suite, '/usr/bin/python3');
      expect(r.status, `${suite}: ${r.output}`).toBe(0);
    }
  });
});
