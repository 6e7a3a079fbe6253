import { describeExit, ExecutionOutcome, type KernelExecution } from '@stoa/kernel';
import type { ExecuteResult } from './execution.types';
import { truncateStderr, truncateStdout } from './truncation';

export const FAILED = 'Kernel execution failed';

export function emptyResult(): Omit<ExecuteResult, 'description'> {
  return { stdout: '', stderr: '', execution_time: 0, success: false, error: FAILED, tool_calls: [], artifacts: [] };
}

/** A kernel run as the reference's inline result (§1.2): truncated streams, timeout and death messages. */
export function shapeResult(run: KernelExecution, timeoutS: number, limit: number, graceMs: number): Omit<ExecuteResult, 'description' | 'session_id'> {
  const shaped = shapeOutcome(run, timeoutS, limit, graceMs);
  if (!run.limitNotes?.length) return shaped;
  // A session cap the cell ran into fails the cell and says so after whatever else stderr holds.
  const stderr = [shaped.stderr.replace(/\n$/, ''), ...run.limitNotes].filter(Boolean).join('\n');
  return { ...shaped, stderr, success: false, error: FAILED };
}

function shapeOutcome(run: KernelExecution, timeoutS: number, limit: number, graceMs: number): Omit<ExecuteResult, 'description' | 'session_id'> {
  if (run.rejected) return { ...emptyResult(), stderr: run.rejected, error: run.rejected };
  const stdout = truncateStdout(run.stdout, limit);
  let stderr = truncateStderr(run.stderr, limit);
  const omitted = run.toolCallsDropped && Object.keys(run.toolCallsDropped).length ? { tool_calls_omitted: run.toolCallsDropped } : {};
  const result = { ...emptyResult(), stdout, stderr, execution_time: round3(run.durationMs / 1000), tool_calls: run.toolCalls, ...omitted };
  switch (run.outcome) {
    case ExecutionOutcome.completed:
      return { ...result, success: !run.raised, error: run.raised ? FAILED : null };
    case ExecutionOutcome.interrupted:
      return {
        ...result,
        stderr: `Execution timeout after ${timeoutS}s. The code was interrupted; the session and variables defined before the interrupt are kept.`,
        error: FAILED,
      };
    case ExecutionOutcome.killed:
      return {
        ...result,
        stderr:
          `Execution timeout after ${timeoutS}s. The kernel did not respond to the interrupt within ${graceMs / 1000}s, ` +
          'so it was killed and restarted: all session state (variables, imports) was lost. The next call runs in a fresh kernel in the same session.',
        error: FAILED,
        kernel_restarted: true,
      };
    case ExecutionOutcome.died: {
      if (run.fault) {
        stderr += `${stderr && !stderr.endsWith('\n') ? '\n' : ''}The kernel was stopped because ${run.fault}; user code must not use the driver's channels. All session state (variables, imports) was lost; the next call starts a fresh kernel in the same session.`;
        return { ...result, stderr, error: FAILED, kernel_restarted: true };
      }
      const how = run.exit ? describeExit(run.exit.code, run.exit.signal) : 'unknown cause';
      const hint = run.exit?.signal === 'SIGKILL' ? ' (SIGKILL usually means it ran out of memory or was stopped)' : '';
      stderr += `${stderr && !stderr.endsWith('\n') ? '\n' : ''}The kernel process died while running this code (${how}${hint}). All session state (variables, imports) was lost; the next call starts a fresh kernel in the same session.`;
      return { ...result, stderr, error: FAILED, kernel_restarted: true };
    }
  }
}

export function round3(n: number): number {
  return Math.round(n * 1000) / 1000;
}
