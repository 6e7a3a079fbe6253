import { type McpServer, ResourceNotFoundError, type ServerContext } from '@modelcontextprotocol/server';
import type { Principal } from '@stoa/core';

/** Freshness hint of a cacheable result (2026-07-28 `CacheableResult`: `ttlMs`, `cacheScope`). */
export interface CacheHint {
  ttlMs: number;
  /** `private`: only this caller may reuse it (someone's own data); `public`: the same for every caller. */
  cacheScope: 'public' | 'private';
}

/** A resource as `resources/list` shows it. */
export interface McpResource {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  size?: number;
  _meta?: Record<string, unknown>;
}

/** A resource template as `resources/templates/list` shows it (RFC 6570 `uriTemplate`). */
export interface McpResourceTemplate {
  uriTemplate: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
}

/** One content of a `resources/read` result: text, or base64 `blob` for binary files. */
export interface McpResourceContents {
  uri: string;
  mimeType?: string;
  text?: string;
  blob?: string;
  _meta?: Record<string, unknown>;
}

/** A `resources/read` answer and how long it may be reused. */
export interface ReadResult {
  contents: McpResourceContents[];
  cache: CacheHint;
}

/**
 * What an app serves as MCP resources, always looked up for the caller. `read` answers undefined for a URI the
 * caller has no resource at — unknown and someone else's alike, so both get the same "Resource not found" error.
 * It may throw a ProtocolError of its own (a connector relaying its upstream's answer).
 */
export interface ResourceProvider {
  list(principal: Principal): Promise<McpResource[]>;
  templates(principal: Principal): Promise<McpResourceTemplate[]>;
  read(principal: Principal, uri: string): Promise<ReadResult | undefined>;
  /** Hints of the list results (a listing of someone's files is private and stale at once). */
  cache: { list: CacheHint; templates: CacheHint };
}

/** The error every unknown (or foreign) resource URI gets: -32602 with the URI in `data` (SEP-2164). */
export function resourceNotFound(uri: string): ResourceNotFoundError {
  return new ResourceNotFoundError(uri);
}

/**
 * `resources/list`, `resources/templates/list` and `resources/read` from `provider`. Cache hints go on the result
 * only for 2026-07-28 requests (they are not part of the 2025 result shapes).
 */
export function registerResourceMethods(
  server: McpServer,
  provider: ResourceProvider,
  era: 'legacy' | 'modern',
  caller: (ctx: ServerContext) => Principal,
): void {
  const hinted = <R extends object>(result: R, hint: CacheHint): R => withHint(result, hint, era);
  server.server.setRequestHandler('resources/list', async (_req, ctx) =>
    hinted({ resources: await provider.list(caller(ctx)) }, provider.cache.list),
  );
  server.server.setRequestHandler('resources/templates/list', async (_req, ctx) =>
    hinted({ resourceTemplates: await provider.templates(caller(ctx)) }, provider.cache.templates),
  );
  server.server.setRequestHandler('resources/read', async (req, ctx) => {
    const uri = req.params.uri;
    const found = await provider.read(caller(ctx), uri);
    if (!found) throw resourceNotFound(uri);
    return hinted({ contents: found.contents } as { contents: never[] }, found.cache);
  });
}

/** `result` with the cache hint for a 2026-07-28 request; unchanged for a 2025-era one. */
export function withHint<R extends object>(result: R, hint: CacheHint, era: 'legacy' | 'modern'): R {
  return era === 'modern' ? { ...result, ...hint } : result;
}

/** The stricter of two hints: private beats public, the shorter lifetime wins. */
function stricter(a: CacheHint, b: CacheHint): CacheHint {
  return {
    ttlMs: Math.min(a.ttlMs, b.ttlMs),
    cacheScope: a.cacheScope === 'private' || b.cacheScope === 'private' ? 'private' : 'public',
  };
}

/** Several providers served as one: lists concatenated in order, a URI read by the first provider that has it. */
export function combinedResources(providers: readonly ResourceProvider[]): ResourceProvider {
  const [first, ...rest] = providers;
  if (!first) throw new Error('combinedResources needs at least one provider');
  return {
    cache: {
      list: rest.reduce((h, p) => stricter(h, p.cache.list), first.cache.list),
      templates: rest.reduce((h, p) => stricter(h, p.cache.templates), first.cache.templates),
    },
    list: async (principal) => (await Promise.all(providers.map((p) => p.list(principal)))).flat(),
    templates: async (principal) => (await Promise.all(providers.map((p) => p.templates(principal)))).flat(),
    read: async (principal, uri) => {
      for (const p of providers) {
        const found = await p.read(principal, uri);
        if (found) return found;
      }
      return undefined;
    },
  };
}
