import { Logger, type OnApplicationShutdown } from '@nestjs/common';
import type { ActivityEventInput } from '../activity.types';
import { capDisplays, clipTextFields } from './event-limits';
import type { ActivityPublisherConfig } from './publisher.config';
import { writerCredential, type WriterCredential } from './writer-credential';

/** Counters of a publisher (a metrics exporter reads them). */
export interface ActivityPublisherStats {
  /** Events accepted by publish(). */
  published: number;
  /** Events the activity app acknowledged. */
  sent: number;
  /** Events lost: the queue overflowed (oldest first) or their POST failed or timed out. */
  dropped: number;
  /** Events waiting now. */
  queued: number;
}

/**
 * Fire-and-forget activity events (reference §9.1, batched): `publish` only appends to a bounded in-memory queue
 * and never throws or waits; one background drain POSTs batches to `{url}/events`. When the activity app is down
 * or slow the oldest events are dropped and counted — a tool call never waits on the dashboard.
 */
export class ActivityPublisher implements OnApplicationShutdown {
  private readonly logger = new Logger(ActivityPublisher.name);
  private readonly queue: Record<string, unknown>[] = [];
  private readonly url: string | undefined;
  private readonly credential: WriterCredential;
  private draining: Promise<void> | undefined;
  private inFlight: AbortController | undefined;
  private stopped = false;
  private counts = { published: 0, sent: 0, dropped: 0 };

  constructor(
    private readonly config: ActivityPublisherConfig,
    /** Default `server` of every event (the app's name). */
    private readonly server: string,
  ) {
    this.url = config.url && `${config.url}/events`;
    this.credential = writerCredential(config, this.logger);
  }

  /** Whether events go anywhere (ACTIVITY_UI_URL set). */
  get enabled(): boolean {
    return this.url !== undefined;
  }

  /** Events lost so far (overflow, failed or timed-out POSTs). */
  get dropped(): number {
    return this.counts.dropped;
  }

  stats(): ActivityPublisherStats {
    return { ...this.counts, queued: this.queue.length };
  }

  /** Queues an event; never throws, never waits. A no-op when publishing is off. */
  publish(event: ActivityEventInput): void {
    if (!this.url || this.stopped) return;
    try {
      const e: Record<string, unknown> = { server: this.server, timestamp: Date.now() / 1000, ...event };
      clipTextFields(e, this.config.max_text_chars);
      if (event.displays?.length)
        e.displays = capDisplays(
          event.displays.map((d) => ({ ...d, metadata: d.metadata ?? {} })),
          this.config.max_display_bytes,
        );
      this.queue.push(e);
      this.counts.published++;
      if (this.queue.length > this.config.queue_size) {
        this.queue.shift();
        this.counts.dropped++;
      }
      this.draining ??= this.drain().finally(() => (this.draining = undefined));
    } catch (err) {
      this.logger.debug({ err: (err as Error).message }, 'activity event not queued');
    }
  }

  /** Waits until the queue is empty or `timeoutMs` passed (tests, shutdown). */
  async flush(timeoutMs = this.config.timeout_ms + 500): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.draining && Date.now() < deadline) {
      await Promise.race([this.draining, new Promise((r) => setTimeout(r, Math.max(1, deadline - Date.now())))]);
    }
  }

  /** Sends what is queued (bounded by the POST timeout), then stops; later events are ignored. */
  async onApplicationShutdown(): Promise<void> {
    await this.flush();
    this.stopped = true;
    this.inFlight?.abort();
    this.counts.dropped += this.queue.splice(0).length;
  }

  private async drain(): Promise<void> {
    // Off the caller's tick: publish() returns before any serialisation or I/O.
    await new Promise((r) => setImmediate(r));
    while (this.queue.length && !this.stopped) {
      const batch = this.queue.splice(0, this.config.batch_size);
      try {
        await this.post(batch);
        this.counts.sent += batch.length;
      } catch (err) {
        this.counts.dropped += batch.length;
        this.logger.debug({ err: (err as Error).message, events: batch.length }, 'activity events dropped');
        await new Promise((r) => setTimeout(r, this.config.retry_delay_ms).unref());
      }
    }
  }

  private async post(batch: Record<string, unknown>[]): Promise<void> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    const auth = await this.credential();
    if (auth) headers.authorization = auth;
    const ac = new AbortController();
    this.inFlight = ac;
    const timer = setTimeout(
      () => ac.abort(new Error(`no answer within ${this.config.timeout_ms} ms`)),
      this.config.timeout_ms,
    ).unref();
    try {
      const res = await fetch(this.url as string, {
        method: 'POST',
        headers,
        body: JSON.stringify({ events: batch }),
        signal: ac.signal,
      });
      const body = await res.text();
      if (!res.ok) throw new Error(`HTTP ${res.status}: ${body.slice(0, 300)}`);
    } finally {
      clearTimeout(timer);
      this.inFlight = undefined;
    }
  }
}
