import { z } from 'zod';
import { ConfigError, type ConfigSource } from '@stoa/config';
import { connectorFields, loadConnectorConfig, poolConfigSchema, upstreamSchema } from '@stoa/connectors';
import { searchConfigSchema } from '@stoa/tools';

/** A cross-server link between states (navigation aid in the unified plan). */
const bridgeSchema = z.strictObject({
  from_state: z.string().min(1),
  to_state: z.string().min(1),
  description: z.string().default(''),
});

/** The router's YAML (reference RouterConfig, §8.1) plus auth, listener and pool settings. */
export const routerConfigSchema = z.strictObject({
  ...connectorFields,
  upstreams: z
    .array(upstreamSchema)
    .min(1, 'a router needs at least one upstream (upstreams: in YAML or UPSTREAM_<NAME>_URL)'),
  bridges: z.array(bridgeSchema).default([]),
  connectors: poolConfigSchema,
  /** Bounds of search_{name}_tools queries. */
  search: searchConfigSchema,
});
export type RouterConfig = z.output<typeof routerConfigSchema>;

/**
 * `UPSTREAM_<NAME>_URL` adds an upstream (or replaces the URL of the one with that name); names are lowercased
 * and sorted as in the reference (§8.8).
 */
function applyUpstreamEnv(raw: Record<string, unknown>, env: NodeJS.ProcessEnv): void {
  const problems: string[] = [];
  const fromEnv = new Map<string, string>();
  for (const [key, value] of Object.entries(env)) {
    const m = /^UPSTREAM_(.+)_URL$/.exec(key);
    if (!m) continue;
    const name = (m[1] as string).toLowerCase();
    if (!/^[A-Za-z][A-Za-z0-9_]*$/.test(m[1] as string))
      problems.push(`${key}: <NAME> must match [A-Za-z][A-Za-z0-9_]*`);
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
}

export interface RouterSettings {
  config: RouterConfig;
  baseDir: string;
}

/** Loads the router YAML (+ env + CLI overrides); every problem is reported at once. */
export function loadRouterSettings(
  file: ConfigSource,
  overrides: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
): RouterSettings {
  const { config, baseDir } = loadConnectorConfig(routerConfigSchema, file, overrides, env, applyUpstreamEnv);
  const names = new Set<string>();
  for (const u of config.upstreams) {
    if (names.has(u.name))
      throw new ConfigError(typeof file === 'string' ? file : file ? '(config object)' : '(environment)', [
        `upstreams: duplicate name '${u.name}'`,
      ]);
    names.add(u.name);
  }
  return { config, baseDir };
}
