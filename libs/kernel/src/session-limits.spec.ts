import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CgroupCounter } from './cgroup-counter';
import type { KernelProcess } from './kernel-process';
import { ExecutionOutcome, type KernelExecution } from './kernel.types';
import { OutputCapture } from './output-capture';
import { sandboxConfigSchema } from './sandbox.config';
import { guardCell, type MeasuredUse } from './session-limits';

// A real directory on disk; no kernel runs (the cell is a function that writes files), and none is interrupted.
const kernel = {
  interrupt: () => {
    throw new Error('interrupted');
  },
  kill: () => {
    throw new Error('killed');
  },
} as unknown as KernelProcess;
const completed = (): KernelExecution => ({
  outcome: ExecutionOutcome.completed,
  raised: false,
  stdout: new OutputCapture(0, 0),
  stderr: new OutputCapture(0, 0),
  displays: [],
  toolCalls: [],
  stashed: [],
  durationMs: 0,
});
const limitsOf = (l: Record<string, number>) => sandboxConfigSchema.parse({ limits: l }).limits;

describe('guardCell disk accounting', () => {
  let dir: string;
  let n = 0;
  const write =
    (count = 1) =>
    () => {
      for (let i = 0; i < count; i++) writeFileSync(join(dir, 'work', `f${n++}`), 'x');
      return Promise.resolve(completed());
    };
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'stoa-quota-'));
    mkdirSync(join(dir, 'work'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('walks before the first cell, lets cells right after share that walk, and walks again once disk_check_ms passed', async () => {
    const limits = limitsOf({ disk_mb: 4096, disk_files: 100_000, disk_check_ms: 1000 });
    const last: MeasuredUse = {};
    await guardCell(limits, kernel, dir, undefined, write(), last);
    expect(last.usage?.files).toBe(1); // work/, as the cell found it: its file could not fill 100 000 in a few ms
    const walkedAt = last.at;
    await guardCell(limits, kernel, dir, undefined, write(), last);
    expect(last.usage?.files).toBe(1); // shared again
    expect(last.at).toBe(walkedAt);
    last.at = performance.now() - 1000; // the last walk is disk_check_ms old
    await guardCell(limits, kernel, dir, undefined, write(), last);
    expect(last.usage?.files).toBe(4);
    expect(last.at).toBeGreaterThan(walkedAt!);
  });

  it('walks after every cell near the quota, and says when a cell took the directory over it', async () => {
    const limits = limitsOf({ disk_mb: 4096, disk_files: 5, disk_check_ms: 1000 });
    const last: MeasuredUse = {};
    expect((await guardCell(limits, kernel, dir, undefined, write(), last)).limitNotes).toBeUndefined();
    const over = await guardCell(limits, kernel, dir, undefined, write(5), last);
    expect(last.usage?.files).toBe(6); // a walk stops counting at disk_files + 1
    expect(over.limitNotes?.[0]).toMatch(/over its disk quota of 4096 MiB and 5 files .* Delete files/);
  });

  it('walks after every cell when the byte headroom is small', async () => {
    const limits = limitsOf({ disk_mb: 1, disk_files: 0, disk_check_ms: 1000 });
    const last: MeasuredUse = {};
    await guardCell(limits, kernel, dir, undefined, write(), last);
    const big = () => (
      writeFileSync(join(dir, 'work', 'big'), Buffer.alloc(2 * 1024 * 1024, 1)),
      Promise.resolve(completed())
    );
    const over = await guardCell(limits, kernel, dir, undefined, big, last);
    expect(last.usage!.bytes).toBeGreaterThan(1024 * 1024);
    expect(over.limitNotes?.[0]).toMatch(/over its disk quota of 1 MiB and unlimited files/);
  });
});

describe('CgroupCounter', () => {
  it('re-reads its open file from the start each time, and reads 0 once the file is gone', () => {
    const dir = mkdtempSync(join(tmpdir(), 'stoa-counter-'));
    try {
      const file = join(dir, 'memory.events');
      writeFileSync(file, 'low 0\nhigh 0\nmax 2\noom 1\noom_kill 1\n');
      const c = new CgroupCounter(file, 'oom_kill');
      expect(c.read()).toBe(1);
      writeFileSync(file, 'low 0\nhigh 0\nmax 9\noom 4\noom_kill 12\n'); // same inode, rewritten (as the kernel does)
      expect(c.read()).toBe(12);
      c.close();
      rmSync(file);
      expect(c.read()).toBe(0);
      expect(new CgroupCounter(file, 'max').read()).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
