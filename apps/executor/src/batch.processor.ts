import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { inSpan } from '@stoa/activity';
import { BatchRunner, type BatchItem } from '@stoa/execution';
import { JobService, JobStatus } from '@stoa/jobs';
import type { ExecutorSettings } from './executor.config';
import { EXECUTOR_SETTINGS } from './executor.tokens';

/** Data carried by a queued batch item: everything another replica needs to run it (the gateway's policy included). */
export type BatchItemData = Omit<BatchItem, 'jobId'>;

/** Job processor: runs this server's batch items on this replica, from whichever replica queued them. */
@Injectable()
export class BatchProcessor implements OnApplicationBootstrap {
  private readonly logger = new Logger(BatchProcessor.name);

  constructor(
    private readonly jobs: JobService,
    private readonly runner: BatchRunner,
    @Inject(EXECUTOR_SETTINGS) private readonly settings: ExecutorSettings,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.jobs.processBatchItems((jobId, data, signal) =>
      inSpan('job.run', { attributes: { 'stoa.job.id': jobId, 'stoa.job.kind': 'batch_item' } }, () =>
        this.run(jobId, data as unknown as BatchItemData, signal),
      ),
    );
  }

  private async run(jobId: string, item: BatchItemData, signal: AbortSignal): Promise<void> {
    if (!(await this.jobs.claim(jobId))) return; // cancelled or finished elsewhere
    this.jobs.trackOutput(jobId);
    try {
      const out = await this.runner.run({ jobId, ...item }, signal, (stream, text) =>
        this.jobs.appendOutput(jobId, stream, text),
      );
      await this.jobs.finish(jobId, {
        status: out.status,
        result: out.result as unknown as Record<string, unknown>,
        payload: out.payload,
        error: out.error,
      });
    } catch (err) {
      this.logger.warn({ jobId, err: (err as Error).message }, 'batch item failed');
      await this.jobs.finish(jobId, {
        status: signal.aborted ? JobStatus.cancelled : JobStatus.failed,
        error: signal.aborted ? 'cancelled' : `Batch item failed: ${(err as Error).message}`,
      });
    }
    // After the end is stored, so the counts include this item (a cancel already counted it).
    if (item.batchId) await this.runner.reportProgress(item.batchId);
  }
}
