import { Logger } from '@nestjs/common';
import { ProtocolError } from '@modelcontextprotocol/server';
import type { Principal } from '@stoa/core';
import type { CacheHint } from '@stoa/mcp';
import type { Upstream } from './upstream';
import type { UpstreamPool } from './upstream-pool';
import { upstreamRequest } from './upstream-requests';

const MAX_PAGES = 20;
const logger = new Logger('UpstreamListing');
/** What an upstream that gives no hint (2025 era) gets: private and stale at once. */
export const PRIVATE_NOW: CacheHint = { ttlMs: 0, cacheScope: 'private' };

/** One upstream's listing: its items (every page) and the hint of its first page. */
export interface Listing<T> {
  upstream: Upstream;
  items: T[];
  cache: CacheHint;
}

/** `method` on each of `upstreams` at once (each paged to its end) for `principal`; failing upstreams are left out. */
export async function listEach<T>(
  pool: UpstreamPool,
  upstreams: readonly Upstream[],
  method: string,
  principal: Principal,
  items: (result: Record<string, unknown>) => T[] | undefined,
): Promise<Listing<T>[]> {
  const settled = await Promise.allSettled(
    upstreams.map(async (upstream) => {
      const out: T[] = [];
      let cursor: string | undefined;
      let cache: CacheHint | undefined;
      for (let page = 0; page < MAX_PAGES; page++) {
        const r = await upstreamRequest(pool, upstream, principal, method, cursor ? { cursor } : {});
        cache ??= hintOf(r);
        out.push(...(items(r) ?? []));
        cursor = typeof r.nextCursor === 'string' && r.nextCursor ? r.nextCursor : undefined;
        if (!cursor) break;
      }
      return { upstream, items: out, cache: cache ?? PRIVATE_NOW };
    }),
  );
  return settled.flatMap((s, i) => {
    if (s.status === 'fulfilled') return [s.value];
    logger.debug({ upstream: upstreams[i]?.name, method, err: (s.reason as Error).message }, 'upstream left out');
    return [];
  });
}

/** Identical workers list the same static items: each once, the first kept. */
export function uniqueBy<T>(items: T[], key: (item: T) => string): T[] {
  const seen = new Set<string>();
  return items.filter((i) => !seen.has(key(i)) && !!seen.add(key(i)));
}

/** An upstream's "no such resource / prompt" (-32002, or -32602 "… not found"), which another upstream may not give. */
export function isNotFound(err: unknown): boolean {
  return err instanceof ProtocolError && (err.code === -32002 || /not found/i.test(err.message));
}

/** The upstream's own cache hint of a result (2026-07-28 upstreams give one), else private and stale. */
export function hintOf(r: Record<string, unknown>): CacheHint {
  const ttl = r.ttlMs;
  const scope = r.cacheScope;
  return typeof ttl === 'number' && ttl >= 0 && (scope === 'public' || scope === 'private')
    ? { ttlMs: ttl, cacheScope: scope }
    : PRIVATE_NOW;
}

/** The stricter of several hints (an aggregate is only as reusable as its least reusable part). */
export function strictest(hints: readonly CacheHint[]): CacheHint {
  if (!hints.length) return PRIVATE_NOW;
  return {
    ttlMs: Math.min(...hints.map((h) => h.ttlMs)),
    cacheScope: hints.some((h) => h.cacheScope === 'private') ? 'private' : 'public',
  };
}
