import { Inject, Injectable, Optional } from '@nestjs/common';
import { ActivityEventType, ActivityPublisher } from '@stoa/activity';
import type { BatchCounts, BatchRecord } from '@stoa/jobs';
import type { KernelExecution } from '@stoa/kernel';
import { TransferRuntime, type Artifact } from '@stoa/transfer';
import { EXECUTION_SETTINGS, type ExecutionSettings } from './execution.config';
import type { ExecuteCall, ExecuteResult } from './execution.types';

/** Where a finished cell ran: a session (inline or job) or a batch item. */
interface CellPlace {
  owner: string;
  sessionId: string;
  code: string;
  description: string;
  jobId?: string;
  batchId?: string;
}

/**
 * The execute pipeline's activity events (reference §9.2): code_executed / code_failed with the kernel's displays
 * (they go to the dashboard only, never into the agent's result), job_started and job_finished, and our
 * batch_progress. A no-op when the app publishes no activity.
 */
@Injectable()
export class ExecutionActivity {
  constructor(
    @Inject(EXECUTION_SETTINGS) private readonly settings: ExecutionSettings,
    @Optional() private readonly publisher?: ActivityPublisher,
    @Optional() private readonly transfer?: TransferRuntime,
  ) {}

  /** Whether events go anywhere (callers skip work done only for an event). */
  get enabled(): boolean {
    return this.publisher?.enabled === true;
  }

  /** An inline run answered to the caller. */
  inline(call: ExecuteCall, run: KernelExecution & { artifacts: Artifact[] }, result: ExecuteResult): void {
    if (!this.enabled) return;
    this.cell(place(call), run, result, run.artifacts);
  }

  /** A batch item's run. */
  batchItem(p: CellPlace, run: KernelExecution, result: ExecuteResult): void {
    if (!this.enabled) return;
    this.cell(p, run, result, []);
  }

  /** A run became a background job (async_only submit or adaptive promotion). */
  jobStarted(call: ExecuteCall, jobId: string): void {
    this.publisher?.publish({
      type: ActivityEventType.jobStarted,
      description: call.description,
      user: call.runtime.record.owner,
      session_id: call.runtime.record.id,
      code: call.code,
      job_id: jobId,
    });
  }

  /** A background job ended (`status`: completed, failed, cancelled). */
  jobFinished(call: ExecuteCall, jobId: string, status: string, result: Partial<ExecuteResult>, error: string | null) {
    this.publisher?.publish({
      type: ActivityEventType.jobFinished,
      description: `job ${jobId} ${status}`,
      user: call.runtime.record.owner,
      session_id: call.runtime.record.id,
      success: status === 'completed',
      job_id: jobId,
      stdout: result.stdout,
      stderr: result.stderr,
      error,
      duration_ms: result.execution_time === undefined ? undefined : result.execution_time * 1000,
      tool_calls: result.tool_calls as unknown as Record<string, unknown>[] | undefined,
    });
  }

  /**
   * A batch's counts, in its parent session's lane: once when created, then after each item's end. Items may end
   * on several replicas at once, so two events can carry the same counts or arrive out of order; the counts only
   * grow, and the event after the last item's end carries the final ones.
   */
  batchProgress(batch: BatchRecord, counts: BatchCounts): void {
    if (!this.enabled) return;
    const done = counts.completed + counts.failed;
    this.publisher?.publish({
      type: ActivityEventType.batchProgress,
      server: this.settings.serverName,
      description: `batch ${batch.id}: ${done}/${counts.total} done${counts.failed ? `, ${counts.failed} failed` : ''}`,
      user: batch.owner,
      session_id: batch.parentSessionId,
      batch_id: batch.id,
      success: counts.running ? null : counts.failed === 0,
      ...counts,
    });
  }

  private cell(p: CellPlace, run: KernelExecution, result: ExecuteResult, artifacts: Artifact[]): void {
    const links = this.transfer?.links;
    this.publisher?.publish({
      type: result.success ? ActivityEventType.codeExecuted : ActivityEventType.codeFailed,
      server: this.settings.serverName,
      description: p.description,
      user: p.owner,
      session_id: p.sessionId,
      success: result.success,
      code: p.code,
      stdout: result.stdout,
      stderr: result.stderr,
      error: result.error,
      duration_ms: run.durationMs,
      tool_calls: result.tool_calls as unknown as Record<string, unknown>[],
      displays: run.displays,
      saved_files: artifacts.map((a) => ({
        name: a.name,
        mime_type: a.mime_type,
        size_bytes: a.size_bytes,
        download_url: links?.create(p.sessionId, p.owner, a.name).url,
      })),
      job_id: p.jobId,
      batch_id: p.batchId,
    });
  }
}

function place(call: ExecuteCall): CellPlace {
  return {
    owner: call.runtime.record.owner,
    sessionId: call.runtime.record.id,
    code: call.code,
    description: call.description,
  };
}
