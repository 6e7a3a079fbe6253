import { LRUCache } from 'lru-cache';
import type { Principal } from '@stoa/core';
import {
  type CacheHint,
  type McpResource,
  type McpResourceTemplate,
  type ReadResult,
  type ResourceProvider,
  type SkillEntry,
  type SkillProvider,
} from '@stoa/mcp';
import type { Upstream } from './upstream';
import type { UpstreamPool } from './upstream-pool';
import { hintOf, isNotFound, listEach, PRIVATE_NOW, uniqueBy } from './upstream-listing';
import { upstreamRequest } from './upstream-requests';

/** Aggregated listings change when an upstream comes or goes: shareable, briefly. */
const SHARED_BRIEFLY: CacheHint = { ttlMs: 60_000, cacheScope: 'public' };

/**
 * The resources and skills of every healthy upstream, for the caller, served by a connector. Listings are the
 * upstreams' listings joined (an upstream that fails drops out); a URI goes back to the upstream that owns it —
 * the one whose server name is the URI's authority (`artifact://{server}/…`, `skill://{server}/…`), else the one
 * that listed it — and is answered there with the caller's own identity, so ownership is checked where the data
 * is and someone else's URI gets the upstream's unknown-URI answer. A URI no upstream owns gets the same answer.
 */
export class UpstreamResources implements ResourceProvider {
  readonly cache = { list: PRIVATE_NOW, templates: SHARED_BRIEFLY };
  /** URIs seen in listings of upstreams whose URIs do not carry their server name (plain MCP servers). */
  private readonly listedAt = new LRUCache<string, string>({ max: 10_000 });

  constructor(private readonly pool: UpstreamPool) {}

  async list(principal: Principal): Promise<McpResource[]> {
    const lists = await this.each('resources/list', principal, (r) => r.resources as McpResource[] | undefined);
    return uniqueBy(
      lists.flatMap(({ upstream, items }) => {
        for (const r of items)
          if (authorityOf(r.uri) !== upstream.catalog?.serverName) this.listedAt.set(r.uri, upstream.name);
        return items;
      }),
      (r) => r.uri,
    );
  }

  async templates(principal: Principal): Promise<McpResourceTemplate[]> {
    const lists = await this.each(
      'resources/templates/list',
      principal,
      (r) => r.resourceTemplates as McpResourceTemplate[] | undefined,
    );
    return uniqueBy(
      lists.flatMap((l) => l.items),
      (t) => t.uriTemplate,
    );
  }

  async read(principal: Principal, uri: string): Promise<ReadResult | undefined> {
    // The owner, or each candidate in turn (identical dispatcher workers share a server name; a URI nobody listed
    // may belong to any): each answers with the caller's identity, so a miss is the upstream's own "not found".
    for (const upstream of this.owners(uri)) {
      try {
        const r = await upstreamRequest(this.pool, upstream, principal, 'resources/read', { uri }, uri);
        return { contents: (r.contents ?? []) as ReadResult['contents'], cache: hintOf(r) };
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
    return undefined;
  }

  /** The skills half: `skills/list` joined over the upstreams, `skills/get` routed like a read. */
  readonly skills: SkillProvider = {
    cache: SHARED_BRIEFLY,
    list: async (principal) =>
      uniqueBy(
        (await this.each('skills/list', principal, (r) => r.skills as SkillEntry[] | undefined)).flatMap(
          (l) => l.items,
        ),
        (s) => s.uri,
      ),
    get: async (principal, uri) => {
      const upstream = this.owners(uri)[0]; // skills are the server's, the same on identical workers
      if (!upstream) return undefined; // answered like an unknown skill of an upstream
      const r = await upstreamRequest(this.pool, upstream, principal, 'skills/get', { uri });
      return r.skill as SkillEntry | undefined;
    },
  };

  /** The upstreams that may hold `uri`: those named by its authority, else the one that listed it, else all. */
  private owners(uri: string): Upstream[] {
    const authority = authorityOf(uri);
    const healthy = this.pool.upstreams().filter((u) => u.healthy);
    const named = healthy.filter((u) => u.catalog?.serverName === authority);
    if (named.length) return named;
    const listed = healthy.find((u) => u.name === this.listedAt.get(uri));
    return listed ? [listed] : healthy;
  }

  /** `method` on every healthy upstream at once (each paged to its end); failing upstreams are left out. */
  private each<T>(method: string, principal: Principal, items: (result: Record<string, unknown>) => T[] | undefined) {
    const healthy = this.pool.upstreams().filter((u) => u.healthy);
    return listEach(this.pool, healthy, method, principal, items);
  }
}

/** The authority of `scheme://authority/…`, or undefined. */
function authorityOf(uri: string): string | undefined {
  return /^[A-Za-z][A-Za-z0-9+.-]*:\/\/([^/?#]*)/.exec(uri)?.[1];
}
