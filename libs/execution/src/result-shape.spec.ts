import { describe, expect, it } from 'vitest';
import { ExecutionOutcome, OutputCapture, type KernelExecution } from '@stoa/kernel';
import { FAILED, shapeResult } from './result-shape';

function run(over: Partial<KernelExecution> = {}, stderr = ''): KernelExecution {
  const err = new OutputCapture(1000, 1000);
  err.append(stderr);
  return {
    outcome: ExecutionOutcome.completed,
    raised: false,
    stdout: new OutputCapture(1000, 1000),
    stderr: err,
    displays: [],
    toolCalls: [],
    stashed: [],
    durationMs: 1234.5678,
    ...over,
  };
}
const shape = (r: KernelExecution) => shapeResult(r, 30, 1000, 2000);

describe('shapeResult: the reference result and a typed failure', () => {
  it('has no failure for a run that completed without raising', () => {
    const { result, failure } = shape(run());
    expect(result).toMatchObject({ success: true, error: null, execution_time: 1.235 });
    expect(failure).toBeUndefined();
  });

  it('calls a raised exception a failure with the generic error', () => {
    const { result, failure } = shape(run({ raised: true }, 'Traceback…'));
    expect(result).toMatchObject({ success: false, error: FAILED, stderr: 'Traceback…' });
    expect(failure).toEqual({ kind: 'raised', summary: FAILED });
  });

  it('summarises a timeout in its first sentence, whether the kernel was interrupted or killed', () => {
    for (const outcome of [ExecutionOutcome.interrupted, ExecutionOutcome.killed]) {
      const { result, failure } = shape(run({ outcome }));
      expect(result.stderr.startsWith('Execution timeout after 30s. ')).toBe(true);
      expect(failure).toEqual({ kind: 'timeout', summary: 'Execution timeout after 30s.' });
    }
    expect(shape(run({ outcome: ExecutionOutcome.killed })).result.kernel_restarted).toBe(true);
  });

  it('summarises a dead kernel with the sentence stderr ends with, and the session caps it ran into', () => {
    const died = run(
      {
        outcome: ExecutionOutcome.died,
        exit: { code: null, signal: 'SIGKILL' },
        limitNotes: ['The session reached its memory limit (1 GiB).'],
      },
      'partial output\n',
    );
    const { result, failure } = shape(died);
    expect(failure?.kind).toBe('kernel_lost');
    expect(failure?.summary).toBe(
      'The kernel process died while running this code (signal SIGKILL (SIGKILL usually means it ran out of memory or was stopped)). ' +
        'All session state (variables, imports) was lost; the next call starts a fresh kernel in the same session.\nThe session reached its memory limit (1 GiB).',
    );
    expect(result.stderr).toBe(`partial output\n${failure?.summary}`);
    expect(result).toMatchObject({ success: false, error: FAILED, kernel_restarted: true });
  });

  it('summarises a kernel stopped for a driver fault with the fault sentence', () => {
    const { failure } = shape(run({ outcome: ExecutionOutcome.died, fault: 'it wrote to the reply channel' }));
    expect(failure).toEqual({
      kind: 'kernel_lost',
      summary: expect.stringMatching(/^The kernel was stopped because it wrote to the reply channel; /) as string,
    });
  });

  it('fails a run that hit a session cap even when its code succeeded', () => {
    const { result, failure } = shape(run({ limitNotes: ['Disk quota reached.'] }, 'out\n'));
    expect(result).toMatchObject({ success: false, error: FAILED, stderr: 'out\nDisk quota reached.' });
    expect(failure).toEqual({ kind: 'limit', summary: FAILED });
  });

  it('shows a refused cell as its reason, and records the generic error for a job', () => {
    const { result, failure } = shape(run({ raised: true, rejected: 'Asset not found: x.csv' }));
    expect(result).toMatchObject({ success: false, stderr: 'Asset not found: x.csv', error: 'Asset not found: x.csv' });
    expect(failure).toEqual({ kind: 'rejected', summary: FAILED });
  });
});
