/** Runs a queued job; `signal` aborts when the job is cancelled from any replica. */
export type JobProcessor = (jobId: string, data: Record<string, unknown>, signal: AbortSignal) => Promise<void>;

/**
 * The one job port: enqueue work on a named queue, process it with bounded concurrency, cancel it
 * wherever it runs. Backed by BullMQ (Redis, shared by replicas) or in-process.
 */
export interface JobQueue {
  readonly backend: 'bullmq' | 'in-process';
  /** Starts processing `queue` on this replica. */
  process(queue: string, concurrency: number, processor: JobProcessor): Promise<void>;
  enqueue(queue: string, jobId: string, data: Record<string, unknown>): Promise<void>;
  /** Removes the job if it waits; aborts it on whichever replica runs it. */
  cancel(queue: string, jobId: string): Promise<void>;
  /** Resolves when the backend can take work (Redis answers PING); rejects with the reason. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export const JOB_QUEUE = Symbol('JOB_QUEUE');
