import type { Response } from 'express';
import type { FeedEvent } from './feed.types';

/** Each event's SSE frame, serialised once however many clients receive it. */
const frames = new WeakMap<FeedEvent, string>();

function frameOf(e: FeedEvent): string {
  let f = frames.get(e);
  if (f === undefined) {
    f = `id: ${e.id}\nevent: activity\ndata: ${JSON.stringify(e)}\n\n`;
    frames.set(e, f);
  }
  return f;
}

export interface SseLimits {
  /** Events written while the socket is still draining before the client is dropped. */
  maxBehindEvents: number;
  /** Bytes waiting in the socket's buffer before the client is dropped. */
  maxBufferedBytes: number;
}

/**
 * One Server-Sent Events response with a bounded buffer: a client that stops reading is dropped (the connection
 * ends) instead of growing this process's memory; its browser reconnects with Last-Event-ID and catches up from
 * the store.
 */
export class SseClient {
  private behind = 0;
  private closed = false;
  /** Set when the client was dropped for falling behind. */
  dropped = false;

  constructor(
    private readonly res: Response,
    private readonly limits: SseLimits,
  ) {
    res.on('drain', () => (this.behind = 0));
    res.on('close', () => (this.closed = true));
  }

  get open(): boolean {
    return !this.closed;
  }

  /** Opens the stream: headers, the reconnect delay, and a comment so proxies pass the response on at once. */
  start(): void {
    this.res.status(200);
    this.res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    this.res.setHeader('Cache-Control', 'no-store');
    this.res.setHeader('X-Accel-Buffering', 'no');
    this.res.flushHeaders();
    this.res.socket?.setNoDelay(true);
    this.write('retry: 2000\n: stream open\n\n');
  }

  event(e: FeedEvent): void {
    this.write(frameOf(e));
  }

  /** Several events in one write (a stored batch: one syscall per client, not one per event). */
  events(es: readonly FeedEvent[]): void {
    if (es.length === 1) this.event(es[0] as FeedEvent);
    else if (es.length) this.write(es.map(frameOf).join(''), es.length);
  }

  /** A named event without id (ping, replayed, token_expired, a live-view snapshot). */
  signal(name: string, data = ''): void {
    this.write(`event: ${name}\ndata: ${data}\n\n`);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.res.end();
  }

  /** Writes `chunk` (`events` events of it count towards the limit once the socket is draining). */
  private write(chunk: string, events = 1): void {
    if (this.closed) return;
    const flushed = this.res.write(chunk);
    if (flushed) return;
    this.behind += events;
    if (this.behind > this.limits.maxBehindEvents || this.res.writableLength > this.limits.maxBufferedBytes) {
      this.dropped = true;
      this.closed = true;
      this.res.destroy();
    }
  }
}
