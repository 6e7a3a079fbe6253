import { randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { Redis } from 'ioredis';
import { FEED_SETTINGS } from './event-store';
import type { FeedEvent, FeedSettings } from './feed.types';

type Listener = (events: readonly FeedEvent[]) => void;

/**
 * Live fan-out of stored events to this replica's stream clients, and through Redis pub/sub to every other
 * replica of the same activity app (in-process only when no Redis is configured). Own messages coming back from
 * Redis are ignored: local clients already have them.
 */
@Injectable()
export class EventHub implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(EventHub.name);
  private readonly listeners = new Set<Listener>();
  private readonly origin = randomBytes(8).toString('hex');
  private pub?: Redis;
  private sub?: Redis;

  constructor(@Inject(FEED_SETTINGS) private readonly settings: FeedSettings) {}

  async onModuleInit(): Promise<void> {
    const url = this.settings.redisUrl;
    if (!url) return;
    this.pub = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 2 });
    this.sub = new Redis(url, { lazyConnect: true });
    for (const r of [this.pub, this.sub])
      r.on('error', (err: Error) => this.logger.warn({ err: err.message }, 'activity Redis connection error'));
    await Promise.all([this.pub.connect(), this.sub.connect()]);
    this.sub.on('message', (_channel: string, message: string) => this.fromRedis(message));
    await this.sub.subscribe(this.settings.channel);
  }

  async onModuleDestroy(): Promise<void> {
    this.listeners.clear();
    await Promise.allSettled([this.pub?.quit(), this.sub?.quit()]);
  }

  /** Live stream clients of this replica. */
  get size(): number {
    return this.listeners.size;
  }

  /** Calls `listener` with every batch stored from now on (any replica); returns the unsubscribe. */
  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Delivers a stored batch here and to the other replicas. */
  publish(events: readonly FeedEvent[]): void {
    this.deliver(events);
    this.pub
      ?.publish(this.settings.channel, JSON.stringify({ origin: this.origin, events }))
      .catch((err: Error) => this.logger.warn({ err: err.message }, 'activity events not shared with other replicas'));
  }

  private fromRedis(message: string): void {
    try {
      const m = JSON.parse(message) as { origin?: string; events?: FeedEvent[] };
      if (m.origin !== this.origin && Array.isArray(m.events)) this.deliver(m.events);
    } catch {
      this.logger.warn('unreadable activity message on Redis ignored');
    }
  }

  private deliver(events: readonly FeedEvent[]): void {
    for (const l of this.listeners) {
      try {
        l(events);
      } catch (err) {
        this.logger.warn({ err: (err as Error).message }, 'activity stream listener failed');
      }
    }
  }
}
