import { Logger } from '@nestjs/common';
import { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';

/**
 * Small key → worker maps the dispatcher cannot derive from ids: job/batch ownership, sticky principals and
 * 2025-era MCP sessions. In Redis when configured (shared by dispatcher replicas), in memory otherwise.
 */
export class AffinityStore {
  private readonly logger = new Logger(AffinityStore.name);
  private readonly local = new LRUCache<string, string>({ max: 100_000, ttl: 24 * 3_600_000 });
  private readonly redis?: Redis;

  constructor(
    redisUrl: string | undefined,
    private readonly prefix: string,
  ) {
    if (redisUrl) {
      this.redis = new Redis(redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
      this.redis.on('error', (err: Error) =>
        this.logger.warn({ err: err.message }, "affinity Redis unavailable; using this replica's memory"),
      );
    }
  }

  async get(key: string): Promise<string | undefined> {
    const hit = this.local.get(key);
    if (hit || !this.redis) return hit;
    const v = await this.redis.get(`${this.prefix}:${key}`).catch(() => null);
    if (v) this.local.set(key, v);
    return v ?? undefined;
  }

  async set(key: string, value: string, ttlS = 24 * 3600): Promise<void> {
    this.local.set(key, value);
    await this.redis?.set(`${this.prefix}:${key}`, value, 'EX', ttlS).catch(() => undefined);
  }

  async delete(key: string): Promise<void> {
    this.local.delete(key);
    await this.redis?.del(`${this.prefix}:${key}`).catch(() => undefined);
  }

  /** A PING to the shared Redis, or undefined when none is configured (readiness). */
  ping(): Promise<string> | undefined {
    return this.redis?.ping();
  }

  async close(): Promise<void> {
    await this.redis?.quit().catch(() => undefined);
  }
}
