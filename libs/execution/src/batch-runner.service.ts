import { Injectable, Logger, Optional } from '@nestjs/common';
import { InvalidInputError, isPyIdentifier, pyRepr } from '@stoa/core';
import { JobService, JobStatus, type BatchRecord } from '@stoa/jobs';
import { KernelService } from '@stoa/kernel';
import { CellRunner } from './cell-runner.service';
import { ExecutionActivity } from './execution-activity';
import type { ExecuteResult } from './execution.types';
import { emptyResult } from './result-shape';

/** Validates parallel_execute inputs (reference §5.1, plus a size cap) and returns each item's code. */
export function batchItemCodes(code: string, inputs: unknown, resultVariable: string, maxInputs: number): string[] {
  if (!Array.isArray(inputs) || !inputs.length)
    throw new InvalidInputError("'inputs' must be a non-empty list of dictionaries");
  if (inputs.length > maxInputs) {
    throw new InvalidInputError(
      `'inputs' must have at most ${maxInputs} entries (got ${inputs.length}). Split the work into batches of at most ${maxInputs} inputs, ` +
        'or give each input a chunk of the work to loop over in the code template. Nothing was started.',
    );
  }
  if (!inputs.every((i) => i && typeof i === 'object' && !Array.isArray(i)))
    throw new InvalidInputError("Every entry in 'inputs' must be a dictionary");
  if (resultVariable && !isPyIdentifier(resultVariable))
    throw new InvalidInputError("'result_variable' must be a valid Python identifier");
  return (inputs as Record<string, unknown>[]).map((input, i) => {
    const lines = Object.entries(input).map(([key, value]) => {
      if (!isPyIdentifier(key))
        throw new InvalidInputError(
          `Invalid inputs[${i}]: Invalid input key '${key}'. Keys must be valid Python identifiers and not reserved keywords.`,
        );
      return `${key} = ${pyRepr(value)}`;
    });
    return `${lines.join('\n')}\n\n${code}`;
  });
}

/** One batch item to run. */
export interface BatchItem {
  jobId: string;
  owner: string;
  sessionId: string;
  code: string;
  timeoutS: number;
  resultVariable: string;
  /** The batch it belongs to (activity events group items by it). */
  batchId?: string;
  policy?: { allowed?: string[]; blocked?: string[] };
}

export interface BatchItemOutcome {
  status: JobStatus;
  result: ExecuteResult;
  payload: unknown;
  error: string | null;
}

/**
 * Runs batch items in fresh kernels (any replica): execute, capture the result variable, clean up; and tells the
 * activity dashboard how far a batch got.
 */
@Injectable()
export class BatchRunner {
  private readonly logger = new Logger(BatchRunner.name);

  constructor(
    private readonly kernels: KernelService,
    private readonly cells: CellRunner,
    private readonly activity: ExecutionActivity,
    @Optional() private readonly jobs?: JobService,
  ) {}

  /** Publishes a new batch's first batch_progress event: nothing done yet. */
  batchCreated(batch: BatchRecord): void {
    this.activity.batchProgress(batch, { total: batch.total, completed: 0, failed: 0, running: batch.total });
  }

  /**
   * Publishes a batch_progress event with the batch's counts as stored now: call it once the batch is created and
   * after each item's end is recorded. Never throws (a lost progress event must not fail an item).
   */
  async reportProgress(batchId: string): Promise<void> {
    if (!this.activity.enabled || !this.jobs) return;
    try {
      const progress = await this.jobs.batchProgress(batchId);
      if (progress) this.activity.batchProgress(progress.batch, progress.counts);
    } catch (err) {
      this.logger.warn({ batchId, err: (err as Error).message }, 'batch progress not published');
    }
  }

  async run(
    item: BatchItem,
    signal: AbortSignal,
    onOutput: (stream: 'stdout' | 'stderr', text: string) => void,
  ): Promise<BatchItemOutcome> {
    const lease = await this.kernels.acquire();
    const { kernel, dirs } = lease;
    const stop = () => kernel.kill();
    signal.addEventListener('abort', stop);
    try {
      if (signal.aborted) {
        // Cancelled while the kernel was starting: the abort event has already fired.
        kernel.kill();
        return {
          status: JobStatus.cancelled,
          result: { ...emptyResult(), description: '', session_id: item.sessionId, error: 'cancelled' },
          payload: null,
          error: 'cancelled',
        };
      }
      kernel.assign({ USER_IDENTITY: item.owner, STOA_SESSION_ID: item.sessionId });
      const run = await this.cells.run(item.owner, kernel, dirs, item.code, {
        timeoutS: item.timeoutS,
        policy: item.policy,
        onOutput,
        capture: item.resultVariable || undefined,
      });
      const shaped = { ...this.cells.shape(run, item.timeoutS).result, description: '', session_id: item.sessionId };
      this.activity.batchItem(
        {
          owner: item.owner,
          sessionId: item.sessionId,
          code: item.code,
          description: '',
          jobId: item.jobId,
          batchId: item.batchId,
        },
        run,
        shaped,
      );
      if (signal.aborted) return { status: JobStatus.cancelled, result: shaped, payload: null, error: 'cancelled' };
      return {
        status: shaped.success ? JobStatus.completed : JobStatus.failed,
        result: shaped,
        payload: (shaped.success && run.captured?.value) ?? null,
        error: shaped.success ? null : shaped.error,
      };
    } finally {
      signal.removeEventListener('abort', stop);
      this.kernels.retire(lease); // reaped after the item's result is recorded
    }
  }
}
