import type { JobProcessor, JobQueue } from './queue.port';

interface Lane {
  concurrency: number;
  /** Jobs wait until a processor is registered (as they would in Redis). */
  processor?: JobProcessor;
  running: number;
  waiting: { jobId: string; data: Record<string, unknown> }[];
}

/** Single-process backend: a FIFO per queue with a concurrency limit (0 = unlimited). */
export class InProcessJobQueue implements JobQueue {
  readonly backend = 'in-process' as const;
  private readonly lanes = new Map<string, Lane>();
  private readonly active = new Map<string, AbortController>();

  process(queue: string, concurrency: number, processor: JobProcessor): Promise<void> {
    const lane = this.lane(queue);
    Object.assign(lane, { concurrency, processor });
    this.pump(lane);
    return Promise.resolve();
  }

  ping(): Promise<void> {
    return Promise.resolve();
  }

  enqueue(queue: string, jobId: string, data: Record<string, unknown>): Promise<void> {
    const lane = this.lane(queue);
    lane.waiting.push({ jobId, data });
    this.pump(lane);
    return Promise.resolve();
  }

  cancel(queue: string, jobId: string): Promise<void> {
    const lane = this.lanes.get(queue);
    if (lane) lane.waiting = lane.waiting.filter((w) => w.jobId !== jobId);
    this.active.get(jobId)?.abort();
    return Promise.resolve();
  }

  close(): Promise<void> {
    for (const ac of this.active.values()) ac.abort();
    for (const lane of this.lanes.values()) lane.waiting = [];
    return Promise.resolve();
  }

  private lane(queue: string): Lane {
    let lane = this.lanes.get(queue);
    if (!lane) {
      lane = { concurrency: 1, running: 0, waiting: [] };
      this.lanes.set(queue, lane);
    }
    return lane;
  }

  private pump(lane: Lane): void {
    const processor = lane.processor;
    if (!processor) return;
    while (lane.waiting.length && (lane.concurrency <= 0 || lane.running < lane.concurrency)) {
      const next = lane.waiting.shift() as { jobId: string; data: Record<string, unknown> };
      const ac = new AbortController();
      this.active.set(next.jobId, ac);
      lane.running++;
      void processor(next.jobId, next.data, ac.signal)
        .catch(() => undefined)
        .finally(() => {
          lane.running--;
          this.active.delete(next.jobId);
          this.pump(lane);
        });
    }
  }
}
