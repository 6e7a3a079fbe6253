import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// Runs the stdlib unittest suite of the kernel-side code screen (libs/kernel/python/stoa_screen.py).
const pythonDir = resolve(__dirname, '../python');
const args = ['-B', '-m', 'unittest', 'discover', '-s', pythonDir, '-t', pythonDir, '-p', 'test_stoa_screen.py'];

describe('stoa_screen.py (Python unittest suite)', () => {
  it('passes under python3', () => {
    let output: string;
    let status = 0;
    try {
      output = execFileSync('python3', args, {
        cwd: pythonDir,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
        timeout: 30_000,
        env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
      });
    } catch (error) {
      const e = error as { status?: number | null; stdout?: string; stderr?: string };
      status = e.status ?? 1;
      output = `${e.stdout ?? ''}${e.stderr ?? ''}`;
    }
    expect(status, output).toBe(0);
  });
});
