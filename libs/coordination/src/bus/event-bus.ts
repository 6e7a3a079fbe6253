import { EventEmitter } from 'node:events';
import { Logger } from '@nestjs/common';
import { Redis } from 'ioredis';
import type { SquareEvent, SquareEventHandler, SquareEventType } from './square-events';

interface Envelope {
  origin: string;
  event: SquareEvent;
}

/**
 * The square's event bus. Handlers in this process run at once; with Redis every event also goes to the other
 * replicas over one pub/sub channel (a post on replica A wakes a waiter on replica B). Delivery is best effort,
 * which is why waiters re-read the database after subscribing: an event only ever shortens a wait.
 */
export class EventBus {
  private readonly logger = new Logger(EventBus.name);
  private readonly local = new EventEmitter();
  private readonly channel: string;
  private pub?: Redis;
  private sub?: Redis;

  constructor(
    private readonly replica: string,
    prefix: string,
    private readonly redisUrl?: string,
  ) {
    this.local.setMaxListeners(0);
    this.channel = `${prefix}:events`;
  }

  /** `redis` or `in-process`. */
  get backend(): 'redis' | 'in-process' {
    return this.redisUrl ? 'redis' : 'in-process';
  }

  /** The Redis command connection (shared rate limits), when configured and started. */
  get client(): Redis | undefined {
    return this.pub;
  }

  /** Connects to Redis and subscribes (no-op in-process). */
  async start(): Promise<void> {
    if (!this.redisUrl) return;
    this.pub = new Redis(this.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 2 });
    this.sub = new Redis(this.redisUrl, { lazyConnect: true });
    for (const r of [this.pub, this.sub])
      r.on('error', (err: Error) => this.logger.warn({ err: err.message }, 'square event bus: Redis error'));
    await Promise.all([this.pub.connect(), this.sub.connect()]);
    this.sub.on('message', (_channel: string, raw: string) => this.receive(raw));
    await this.sub.subscribe(this.channel);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.stop();
  }

  async stop(): Promise<void> {
    this.local.removeAllListeners();
    await Promise.allSettled([this.sub?.quit(), this.pub?.quit()]);
  }

  /** Liveness of the Redis link, for /health/ready. */
  async ping(): Promise<string> {
    if (!this.pub) return 'in-process';
    return this.pub.ping();
  }

  /** Delivers `event` here now and to the other replicas; a Redis failure is logged, never thrown. */
  publish(event: SquareEvent): void {
    this.deliver(event, true);
    if (!this.pub) return;
    const envelope: Envelope = { origin: this.replica, event };
    this.pub
      .publish(this.channel, JSON.stringify(envelope))
      .catch((err: Error) => this.logger.warn({ err: err.message, type: event.type }, 'event not shared'));
  }

  /** Subscribes to one event type; returns the unsubscribe function. */
  on<T extends SquareEventType>(type: T, handler: SquareEventHandler<T>): () => void {
    const listener = (event: SquareEvent, local: boolean) => handler(event as never, local);
    this.local.on(type, listener);
    return () => void this.local.off(type, listener);
  }

  private receive(raw: string): void {
    let envelope: Envelope;
    try {
      envelope = JSON.parse(raw) as Envelope;
    } catch {
      return;
    }
    if (envelope.origin !== this.replica) this.deliver(envelope.event, false);
  }

  private deliver(event: SquareEvent, local: boolean): void {
    for (const listener of this.local.listeners(event.type) as ((e: SquareEvent, l: boolean) => void)[]) {
      try {
        listener(event, local);
      } catch (err) {
        this.logger.error({ err: (err as Error).message, type: event.type }, 'event handler failed');
      }
    }
  }
}
