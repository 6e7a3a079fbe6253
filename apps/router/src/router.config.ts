import { z } from 'zod';
import { AUTH_ENV, authConfigSchema } from '@stoa/auth';
import { boolish, ConfigError, loadConfig, positiveInt } from '@stoa/config';
import { poolConfigSchema, upstreamSchema } from '@stoa/connectors';

/** `server:` — the router's HTTP listener (same keys as the executor's). */
const serverSchema = z
  .object({
    host: z.string().default('127.0.0.1'),
    port: z.coerce.number().int().min(0).max(65535).default(8000),
    allowed_hosts: z.array(z.string()).default([]),
    max_body_mb: positiveInt.default(16),
    allow_unauthenticated_remote: boolish.default(false),
    public_url: z.url().optional(),
  })
  .prefault({});

/** A cross-server link between states (navigation aid in the unified plan). */
const bridgeSchema = z.object({ from_state: z.string().min(1), to_state: z.string().min(1), description: z.string().default('') });

/** The router's YAML (reference RouterConfig, §8.1) plus auth, listener and pool settings. */
export const routerConfigSchema = z.object({
  name: z.string().regex(/^[A-Za-z][A-Za-z0-9_]{0,40}$/, 'use letters, digits and _ (it becomes part of tool names)'),
  description: z.string().default(''),
  server: serverSchema,
  auth: authConfigSchema,
  upstreams: z.array(upstreamSchema).min(1, 'a router needs at least one upstream (upstreams: in YAML or UPSTREAM_<NAME>_URL)'),
  bridges: z.array(bridgeSchema).default([]),
  connectors: poolConfigSchema,
});
export type RouterConfig = z.output<typeof routerConfigSchema>;

const ENV_MAP = {
  CONNECTOR_NAME: 'name',
  HOST: 'server.host',
  PORT: 'server.port',
  PUBLIC_BASE_URL: 'server.public_url',
  STOA_ALLOW_UNAUTHENTICATED_REMOTE: 'server.allow_unauthenticated_remote',
  CONNECTOR_ALLOW_NOOP_AUTH: 'server.allow_unauthenticated_remote', // the reference's name for the same acknowledgement
  ...AUTH_ENV,
};

/**
 * `UPSTREAM_<NAME>_URL` adds an upstream (or replaces the URL of the one with that name); names are lowercased
 * and sorted as in the reference (§8.8). `CONNECTOR_PORT` (fallback `MCP_SERVER_PORT`) sets the port.
 */
function applyConnectorEnv(raw: Record<string, unknown>, env: NodeJS.ProcessEnv): void {
  const problems: string[] = [];
  const fromEnv = new Map<string, string>();
  for (const [key, value] of Object.entries(env)) {
    const m = /^UPSTREAM_(.+)_URL$/.exec(key);
    if (!m) continue;
    const name = (m[1] as string).toLowerCase();
    if (!/^[A-Za-z][A-Za-z0-9_]*$/.test(m[1] as string)) problems.push(`${key}: <NAME> must match [A-Za-z][A-Za-z0-9_]*`);
    else if (!value) problems.push(`${key}: empty URL`);
    else if (fromEnv.has(name)) problems.push(`${key}: duplicate upstream name '${name}' after lowercasing`);
    else fromEnv.set(name, value);
  }
  if (problems.length) throw new ConfigError('(environment)', problems);
  if (fromEnv.size) {
    const list = Array.isArray(raw.upstreams) ? (raw.upstreams as Record<string, unknown>[]) : [];
    for (const name of [...fromEnv.keys()].sort()) {
      const existing = list.find((u) => u.name === name);
      if (existing) existing.url = fromEnv.get(name);
      else list.push({ name, url: fromEnv.get(name) });
    }
    raw.upstreams = list;
  }
  const port = env.CONNECTOR_PORT ?? env.MCP_SERVER_PORT;
  if (port) raw.server = { ...((raw.server) ?? {}), port };
}

export interface RouterSettings {
  config: RouterConfig;
  baseDir: string;
}

/** Loads the router YAML (+ env + CLI overrides); every problem is reported at once. */
export function loadRouterSettings(file: string | undefined, overrides: Record<string, unknown>, env: NodeJS.ProcessEnv): RouterSettings {
  const { config, baseDir } = loadConfig({ schema: routerConfigSchema, file, env, envMap: ENV_MAP, overrides, prepare: applyConnectorEnv });
  const names = new Set<string>();
  for (const u of config.upstreams) {
    if (names.has(u.name)) throw new ConfigError(file ?? '(environment)', [`upstreams: duplicate name '${u.name}'`]);
    names.add(u.name);
  }
  return { config, baseDir };
}
