import { describeExit, ExecutionOutcome, type KernelExecution } from '@stoa/kernel';
import type { ExecuteResult } from './execution.types';
import { truncateStderr, truncateStdout } from './truncation';

export const FAILED = 'Kernel execution failed';

/** Why a run failed: the code raised, the cell was refused, it timed out, the kernel was lost, a session cap was hit. */
export const RunFailureKind = {
  raised: 'raised',
  rejected: 'rejected',
  timeout: 'timeout',
  kernelLost: 'kernel_lost',
  limit: 'limit',
} as const;
export type RunFailureKind = (typeof RunFailureKind)[keyof typeof RunFailureKind];

/** A failed run: what kind of failure, and the line a background job records as its `error`. */
export interface RunFailure {
  kind: RunFailureKind;
  summary: string;
}

/** A run as the reference's result (§1.2), with why it failed (absent when it succeeded). */
export interface ShapedRun {
  result: Omit<ExecuteResult, 'description' | 'session_id'>;
  failure?: RunFailure;
}

export function emptyResult(): Omit<ExecuteResult, 'description'> {
  return { stdout: '', stderr: '', execution_time: 0, success: false, error: FAILED, tool_calls: [], artifacts: [] };
}

/** A kernel run as the reference's inline result (§1.2): truncated streams, timeout and death messages. */
export function shapeResult(run: KernelExecution, timeoutS: number, limit: number, graceMs: number): ShapedRun {
  const shaped = shapeOutcome(run, timeoutS, limit, graceMs);
  const notes = run.limitNotes ?? [];
  if (!notes.length) return shaped;
  // A session cap the cell ran into fails the cell and says so after whatever else stderr holds.
  const stderr = [shaped.result.stderr.replace(/\n$/, ''), ...notes].filter(Boolean).join('\n');
  const lost = shaped.failure?.kind === RunFailureKind.kernelLost;
  const failure = shaped.failure
    ? { ...shaped.failure, summary: lost ? [shaped.failure.summary, ...notes].join('\n') : shaped.failure.summary }
    : { kind: RunFailureKind.limit, summary: FAILED };
  return { result: { ...shaped.result, stderr, success: false, error: FAILED }, failure };
}

function shapeOutcome(run: KernelExecution, timeoutS: number, limit: number, graceMs: number): ShapedRun {
  if (run.rejected)
    return {
      result: { ...emptyResult(), stderr: run.rejected, error: run.rejected },
      failure: { kind: RunFailureKind.rejected, summary: FAILED },
    };
  const stdout = truncateStdout(run.stdout, limit);
  const stderr = truncateStderr(run.stderr, limit);
  const omitted =
    run.toolCallsDropped && Object.keys(run.toolCallsDropped).length
      ? { tool_calls_omitted: run.toolCallsDropped }
      : {};
  const result = {
    ...emptyResult(),
    stdout,
    stderr,
    execution_time: round3(run.durationMs / 1000),
    tool_calls: run.toolCalls,
    ...omitted,
  };
  const timedOut = `Execution timeout after ${timeoutS}s.`;
  switch (run.outcome) {
    case ExecutionOutcome.completed:
      if (!run.raised) return { result: { ...result, success: true, error: null } };
      return {
        result: { ...result, success: false, error: FAILED },
        failure: { kind: RunFailureKind.raised, summary: FAILED },
      };
    case ExecutionOutcome.interrupted:
      return {
        result: {
          ...result,
          stderr: `${timedOut} The code was interrupted; the session and variables defined before the interrupt are kept.`,
          error: FAILED,
        },
        failure: { kind: RunFailureKind.timeout, summary: timedOut },
      };
    case ExecutionOutcome.killed:
      return {
        result: {
          ...result,
          stderr:
            `${timedOut} The kernel did not respond to the interrupt within ${graceMs / 1000}s, ` +
            'so it was killed and restarted: all session state (variables, imports) was lost. The next call runs in a fresh kernel in the same session.',
          error: FAILED,
          kernel_restarted: true,
        },
        failure: { kind: RunFailureKind.timeout, summary: timedOut },
      };
    case ExecutionOutcome.died: {
      const lost = kernelLost(run);
      return {
        result: {
          ...result,
          stderr: `${stderr}${stderr && !stderr.endsWith('\n') ? '\n' : ''}${lost}`,
          error: FAILED,
          kernel_restarted: true,
        },
        failure: { kind: RunFailureKind.kernelLost, summary: lost },
      };
    }
  }
}

/** The sentence for a kernel that died (or was stopped for touching the driver's channels) during the cell. */
function kernelLost(run: KernelExecution): string {
  if (run.fault) {
    return `The kernel was stopped because ${run.fault}; user code must not use the driver's channels. All session state (variables, imports) was lost; the next call starts a fresh kernel in the same session.`;
  }
  const how = run.exit ? describeExit(run.exit.code, run.exit.signal) : 'unknown cause';
  const hint = run.exit?.signal === 'SIGKILL' ? ' (SIGKILL usually means it ran out of memory or was stopped)' : '';
  return `The kernel process died while running this code (${how}${hint}). All session state (variables, imports) was lost; the next call starts a fresh kernel in the same session.`;
}

export function round3(n: number): number {
  return Math.round(n * 1000) / 1000;
}
