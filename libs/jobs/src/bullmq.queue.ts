import { Logger } from '@nestjs/common';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { settlesWithin, UnavailableError } from '@stoa/core';
import type { JobProcessor, JobQueue } from './queue.port';

export interface BullMqOptions {
  url: string;
  /** Key prefix shared by the replicas of one server. */
  prefix: string;
  /** How long a worker holds a job before another replica may take it over (stalled-job recovery). */
  lockDurationMs: number;
  stalledIntervalMs: number;
  /** Called when BullMQ gives a job up (e.g. its replica died twice); the record must be failed. */
  onLost: (jobId: string, reason: string) => void;
}

/**
 * BullMQ backend: durable queues in Redis shared by every replica of a server. BullMQ aborts a running
 * job only in the worker holding it, so cancellation is published on a Redis channel that every
 * replica listens to.
 */
export class BullMqJobQueue implements JobQueue {
  readonly backend = 'bullmq' as const;
  private readonly logger = new Logger(BullMqJobQueue.name);
  private readonly queues = new Map<string, Queue>();
  private readonly workers: Worker[] = [];
  private readonly active = new Map<string, AbortController>();
  /** Every connection we opened: BullMQ does not close connections it was handed. */
  private readonly connections: Redis[] = [];
  private readonly publisher: Redis;
  private readonly subscriber: Redis;
  private readonly channel: string;

  constructor(private readonly o: BullMqOptions) {
    this.publisher = this.connection();
    this.subscriber = this.connection();
    this.channel = `${o.prefix}:cancel`;
  }

  /** Checks Redis answers (a clear error instead of hanging at start) and subscribes to cross-replica cancellation. */
  async init(timeoutMs = 10_000): Promise<void> {
    this.subscriber.on('message', (_channel: string, jobId: string) => this.active.get(jobId)?.abort());
    const ready = Promise.all([this.publisher.ping(), this.subscriber.subscribe(this.channel)]);
    try {
      if (!(await settlesWithin(ready, timeoutMs))) throw new Error(`no answer within ${timeoutMs / 1000}s`);
      await ready;
    } catch (err) {
      for (const c of this.connections) c.disconnect();
      throw new UnavailableError(
        `Cannot reach Redis at ${redactUrl(this.o.url)} for background jobs (${(err as Error).message}). Check REDIS_URL / jobs.redis_url, or unset it to run jobs in-process.`,
      );
    }
  }

  async ping(): Promise<void> {
    try {
      await this.publisher.ping();
    } catch (err) {
      throw new UnavailableError(`Redis at ${redactUrl(this.o.url)} does not answer (${(err as Error).message})`);
    }
  }

  async process(queue: string, concurrency: number, processor: JobProcessor): Promise<void> {
    const worker = new Worker(
      queue,
      async (job, _token, signal) => {
        const id = job.id as string;
        const ac = new AbortController();
        signal?.addEventListener('abort', () => ac.abort());
        this.active.set(id, ac);
        try {
          await processor(id, job.data as Record<string, unknown>, ac.signal);
        } finally {
          this.active.delete(id);
        }
      },
      {
        connection: this.connection(),
        prefix: this.o.prefix,
        concurrency: concurrency > 0 ? concurrency : 1000,
        lockDuration: this.o.lockDurationMs,
        stalledInterval: this.o.stalledIntervalMs,
        maxStalledCount: 1,
      },
    );
    worker.on('failed', (job, err) => job?.id && this.o.onLost(job.id, err.message));
    worker.on('error', (err) => this.logger.warn({ err: err.message, queue }, 'bullmq worker error'));
    await worker.waitUntilReady();
    this.workers.push(worker);
  }

  async enqueue(queue: string, jobId: string, data: Record<string, unknown>): Promise<void> {
    await this.queue(queue).add('run', data, {
      jobId,
      attempts: 1,
      removeOnComplete: { age: 3600 },
      removeOnFail: { age: 24 * 3600 },
    });
  }

  async cancel(queue: string, jobId: string): Promise<void> {
    this.active.get(jobId)?.abort();
    await this.queue(queue)
      .remove(jobId)
      .catch(() => 0); // an active job cannot be removed; the publish reaches it
    await this.publisher.publish(this.channel, jobId);
  }

  async close(): Promise<void> {
    for (const ac of this.active.values()) ac.abort();
    await Promise.all(this.workers.map((w) => w.close(true)));
    await Promise.all([...this.queues.values()].map((q) => q.close()));
    for (const c of this.connections) c.disconnect();
  }

  private queue(name: string): Queue {
    let q = this.queues.get(name);
    if (!q) {
      q = new Queue(name, { connection: this.connection(), prefix: this.o.prefix });
      this.queues.set(name, q);
    }
    return q;
  }

  private connection(): Redis {
    const c = new Redis(this.o.url, { maxRetriesPerRequest: null, lazyConnect: false });
    this.connections.push(c);
    return c;
  }
}

/** A connection URL with its password hidden (for messages and logs). */
function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparsable URL)';
  }
}
