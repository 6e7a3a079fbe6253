import { settlesWithin } from '@stoa/core';
import { ExecutionOutcome, type KernelExecution } from '@stoa/kernel';
import type { SessionService } from '@stoa/sessions';
import { type BackgroundRunner, PromotableOutput } from './background-runner';
import type { CellRunner, SessionRun } from './cell-runner.service';
import type { ExecutionActivity } from './execution-activity';
import type { ExecuteCall, ExecuteResult, JobHandle } from './execution.types';

/** A foreground run that timed out registers nothing. */
const completed = (run: KernelExecution): boolean => run.outcome === ExecutionOutcome.completed;

/** Execute calls answered in the call itself: sync mode, and adaptive mode until a run outlasts the threshold. */
export class InlineRunner {
  constructor(
    private readonly cells: CellRunner,
    private readonly sessions: SessionService,
    private readonly promotionThresholdS: number,
    private readonly activity?: ExecutionActivity,
  ) {}

  /** sync: the call waits for the cell. */
  async run(call: ExecuteCall): Promise<ExecuteResult> {
    const run = this.cells.inSession(call.runtime, call.code, {
      timeoutS: call.timeoutS,
      policy: call.origin.policy,
      onOutput: call.origin.onOutput,
      keepArtifacts: completed,
    });
    const stop = interruptOnCancel(call);
    try {
      return this.result(call, await run);
    } finally {
      stop();
    }
  }

  /** adaptive: the inline result when the cell settles within the threshold, else `background` adopts the run. */
  async runAdaptive(call: ExecuteCall, background: BackgroundRunner): Promise<ExecuteResult | JobHandle> {
    const output = new PromotableOutput(call.origin.onOutput);
    // A promoted run registers what it wrote, timed out or not.
    const keepArtifacts = (run: KernelExecution) => completed(run) || output.promoted;
    const run = this.cells.inSession(call.runtime, call.code, {
      timeoutS: call.timeoutS,
      policy: call.origin.policy,
      onOutput: output.push,
      keepArtifacts,
    });
    const stop = interruptOnCancel(call);
    try {
      if (await settlesWithin(run, this.promotionThresholdS * 1000)) return this.result(call, await run);
      stop(); // the job outlives this request
      return await background.adopt(call, run, output);
    } finally {
      stop();
    }
  }

  private result(call: ExecuteCall, run: SessionRun): ExecuteResult {
    this.sessions.touch(call.runtime);
    const result = {
      ...this.cells.shape(run, call.timeoutS, run.artifacts).result,
      description: call.description,
      session_id: call.runtime.record.id,
    };
    this.activity?.inline(call, run, result);
    return result;
  }
}

/** The caller cancelling (notifications/cancelled, or closing a 2026-07-28 stream) interrupts the run; returns the undo. */
function interruptOnCancel({ runtime, origin }: ExecuteCall): () => void {
  const cancel = () => runtime.kernel?.interrupt();
  origin.signal?.addEventListener('abort', cancel, { once: true });
  return () => origin.signal?.removeEventListener('abort', cancel);
}
