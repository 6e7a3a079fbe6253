import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { StoaMetrics } from '@stoa/activity';
import { exposed } from '@stoa/connectors';
import type { GatewayPolicy } from './gateway.config';

/** A refused call: the reference's message and when to retry. */
export interface RateLimited {
  message: string;
  retry_after: number;
}

/**
 * Per-principal call limits (`max_calls_per_minute`, per-tool `tool_limits`) with rate-limiter-flexible: in
 * Redis when configured, so every gateway replica shares one budget per caller (with an in-memory insurance
 * limiter if Redis is briefly unreachable); in memory otherwise.
 */
@Injectable()
export class RateLimits implements OnApplicationShutdown {
  private readonly logger = new Logger(RateLimits.name);
  private readonly redis?: Redis;
  private readonly overall?: { limit: number; limiter: RateLimiterAbstract };
  private readonly perTool: { pattern: string; limit: number; limiter: RateLimiterAbstract }[];

  constructor(
    policy: GatewayPolicy,
    redisUrl: string | undefined,
    prefix: string,
    /** Refusals are counted here by limit (`all` or the tool_limits pattern). */
    private readonly metrics?: StoaMetrics,
  ) {
    if (redisUrl) {
      this.redis = new Redis(redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: false });
      this.redis.on('error', (err: Error) =>
        this.logger.warn({ err: err.message }, 'rate-limit Redis unavailable; limits fall back to this process'),
      );
    }
    const make = (points: number, key: string): RateLimiterAbstract => {
      const base = { points, duration: 60, keyPrefix: `${prefix}:${key}` };
      return this.redis
        ? new RateLimiterRedis({ ...base, storeClient: this.redis, insuranceLimiter: new RateLimiterMemory(base) })
        : new RateLimiterMemory(base);
    };
    if (policy.max_calls_per_minute)
      this.overall = { limit: policy.max_calls_per_minute, limiter: make(policy.max_calls_per_minute, 'all') };
    this.perTool = Object.entries(policy.tool_limits).map(([pattern, limit], i) => ({
      pattern,
      limit,
      limiter: make(limit, `tool${i}`),
    }));
  }

  /** Consumes one call for `principal`; undefined when allowed. */
  async consume(principal: string, tool: string): Promise<RateLimited | undefined> {
    const checks = [
      ...(this.overall ? [{ ...this.overall, pattern: 'all', key: principal }] : []),
      ...this.perTool.filter((t) => exposed(tool, [t.pattern])).map((t) => ({ ...t, key: principal })),
    ];
    const charged: typeof checks = [];
    for (const c of checks) {
      try {
        await c.limiter.consume(c.key);
        charged.push(c);
      } catch (res) {
        if (!(res instanceof RateLimiterRes)) throw res;
        // A refused call uses no budget: give back what this call's earlier limits took.
        await Promise.all(charged.map((d) => d.limiter.reward(d.key, 1)));
        this.metrics?.rateLimitRejections.inc({ limit: c.pattern });
        return {
          message: `Rate limit exceeded: maximum ${c.limit} calls per minute. Please wait and try again.`,
          retry_after: Math.max(1, Math.ceil(res.msBeforeNext / 1000)),
        };
      }
    }
    return undefined;
  }

  /** A PING to the configured Redis, or undefined when none is configured (readiness). */
  ping(): Promise<string> | undefined {
    return this.redis?.ping();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.redis?.quit().catch(() => undefined);
  }
}
