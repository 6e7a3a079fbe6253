import { Logger, type OnApplicationShutdown } from '@nestjs/common';
import { Pool } from 'undici';
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
 * and never throws or waits; one background drain clips, serialises and POSTs batches to `{url}/events` over one
 * keep-alive connection. When the activity app is down or slow the oldest events are dropped and counted, and
 * failed POSTs back off (doubling up to `retry_max_delay_ms`) — a tool call never waits on the dashboard, and a
 * dead one costs one refused connection per back-off period, not one per event.
 */
export class ActivityPublisher implements OnApplicationShutdown {
  private readonly logger = new Logger(ActivityPublisher.name);
  private readonly queue: Record<string, unknown>[] = [];
  private readonly path: string | undefined;
  private readonly pool: Pool | undefined;
  private readonly credential: WriterCredential;
  private draining: Promise<void> | undefined;
  private inFlight: AbortController | undefined;
  /** Consecutive failed POSTs (0 after a success): the back-off doubles with each. */
  private failures = 0;
  /** Ends the current back-off wait early (shutdown); set only while waiting. */
  private wake: (() => void) | undefined;
  /** flush() callers, told when the drain goes idle or starts a back-off wait. */
  private settled: (() => void)[] = [];
  private stopped = false;
  private counts = { published: 0, sent: 0, dropped: 0 };

  constructor(
    private readonly config: ActivityPublisherConfig,
    /** Default `server` of every event (the app's name). */
    private readonly server: string,
  ) {
    if (config.url) {
      const base = new URL(config.url);
      this.path = `${base.pathname.replace(/\/+$/, '')}/events`;
      // One kept-alive connection: batches go one after another, so a second would only idle.
      this.pool = new Pool(base.origin, { connections: 1, pipelining: 1, keepAliveTimeout: 30_000 });
    }
    this.credential = writerCredential(config, this.logger);
  }

  /** Whether events go anywhere (ACTIVITY_UI_URL set). */
  get enabled(): boolean {
    return this.path !== undefined;
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
    if (!this.path || this.stopped) return;
    try {
      // Only defaults here; clipping and capping happen in the drain, off the caller's tick.
      this.queue.push({ server: this.server, timestamp: Date.now() / 1000, ...event });
      this.counts.published++;
      if (this.queue.length > this.config.queue_size) {
        this.queue.shift();
        this.counts.dropped++;
      }
      this.draining ??= this.drain().finally(() => {
        this.draining = undefined;
        this.settle();
      });
    } catch (err) {
      this.logger.debug({ err: (err as Error).message }, 'activity event not queued');
    }
  }

  /**
   * Waits until the queue is sent, the drain backs off after a failure (the activity app is down: waiting longer
   * sends nothing), or `timeoutMs` passed (tests, shutdown).
   */
  async flush(timeoutMs = this.config.timeout_ms + 500): Promise<void> {
    if (!this.draining || this.wake) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      new Promise<void>((r) => this.settled.push(r)),
      new Promise<void>((r) => (timer = setTimeout(r, timeoutMs))),
    ]);
    clearTimeout(timer);
  }

  /** Sends what is queued (bounded by the POST timeout), then stops; later events are ignored. */
  async onApplicationShutdown(): Promise<void> {
    await this.flush();
    this.stopped = true;
    this.inFlight?.abort();
    this.wake?.();
    this.counts.dropped += this.queue.splice(0).length;
    await this.pool?.destroy();
  }

  private async drain(): Promise<void> {
    // Off the caller's tick: publish() returns before any serialisation or I/O.
    await new Promise((r) => setImmediate(r));
    while (this.queue.length && !this.stopped) {
      const batch = this.queue.splice(0, this.config.batch_size);
      try {
        await this.post(batch.map((e) => this.limited(e)));
        this.counts.sent += batch.length;
        this.failures = 0;
      } catch (err) {
        this.counts.dropped += batch.length;
        const delayMs = this.backoffMs(this.failures++);
        this.logger.debug({ err: (err as Error).message, events: batch.length, delayMs }, 'activity events dropped');
        await this.backOff(delayMs);
      }
    }
  }

  /** One back-off wait (its timer keeps no process alive; shutdown ends it early). */
  private async backOff(ms: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => this.wake?.(), ms).unref();
      this.wake = () => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
      this.settle();
    });
  }

  private settle(): void {
    for (const s of this.settled.splice(0)) s();
  }

  /** The wait after the `n`th consecutive failure (0-based): the retry delay, doubling, capped. */
  private backoffMs(n: number): number {
    return Math.min(this.config.retry_delay_ms * 2 ** Math.min(n, 20), this.config.retry_max_delay_ms);
  }

  /** An event with its long text clipped and its displays capped (config `max_text_chars`, `max_display_bytes`). */
  private limited(e: Record<string, unknown>): Record<string, unknown> {
    clipTextFields(e, this.config.max_text_chars);
    const displays = e.displays as ActivityEventInput['displays'];
    if (displays?.length)
      e.displays = capDisplays(
        displays.map((d) => ({ ...d, metadata: d.metadata ?? {} })),
        this.config.max_display_bytes,
      );
    return e;
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
      const res = await (this.pool as Pool).request({
        path: this.path as string,
        method: 'POST',
        headers,
        body: JSON.stringify({ events: batch }),
        signal: ac.signal,
      });
      const body = await res.body.text();
      if (res.statusCode >= 300) throw new Error(`HTTP ${res.statusCode}: ${body.slice(0, 300)}`);
    } finally {
      clearTimeout(timer);
      this.inFlight = undefined;
    }
  }
}
