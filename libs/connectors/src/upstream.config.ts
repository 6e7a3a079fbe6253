import { z } from 'zod';
import { positiveInt, serverName } from '@stoa/config';
import type { Principal } from '@stoa/core';
import { upstreamAuthSchema } from './credentials';

/** One `upstreams:` entry (reference UpstreamConfig, plus how the router authenticates to it). */
export const upstreamSchema = z.strictObject({
  /** Our label for the upstream (health, admin, `upstream` arguments); tool names come from the upstream itself. */
  name: serverName,
  /** Base URL of the upstream server, with or without a trailing `/mcp`. */
  url: z.url(),
  /** fnmatch-style globs on the upstream's catalog tool names; null or ["*"] = all. */
  expose_tools: z.array(z.string()).nullable().default(null),
  /** Renames catalog entries: {upstream_name: exposed_name}. */
  tool_aliases: z.record(z.string(), z.string()).default({}),
  auth: upstreamAuthSchema,
});
export type UpstreamConfig = z.output<typeof upstreamSchema>;

/** What the pool needs from upstream credentials: the Authorization value for a caller (undefined = none). */
export interface CredentialSource {
  authorization(principal: Principal): Promise<string | undefined>;
}

/** `connectors:` — timing and bounds of the upstream pool. */
export const poolConfigSchema = z
  .strictObject({
    /** Health check period per upstream. */
    health_interval_seconds: positiveInt.default(10),
    /** Catalog refresh period (a changed catalog version seen by a health check refreshes at once). */
    catalog_refresh_seconds: positiveInt.default(60),
    /** Bound for connecting / fetching a catalog. */
    connect_timeout_seconds: positiveInt.default(30),
    /** Longest a proxied call may take. */
    call_timeout_seconds: positiveInt.default(3600),
    /** Per-caller upstream clients kept at most (least recently used evicted). */
    max_principals: positiveInt.default(1000),
    /** Per-caller upstream clients idle longer than this are closed. */
    principal_idle_minutes: positiveInt.default(30),
    /** Keep-alive connections per upstream. */
    connections_per_upstream: positiveInt.default(64),
  })
  .prefault({});
export type PoolConfig = z.output<typeof poolConfigSchema>;
