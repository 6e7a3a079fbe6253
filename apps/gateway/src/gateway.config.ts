import { z } from 'zod';
import { auditConfigSchema } from '@stoa/audit';
import { ConfigError, dataDirField, positiveInt, type ConfigSource } from '@stoa/config';
import { connectorFields, loadConnectorConfig, poolConfigSchema, upstreamSchema } from '@stoa/connectors';
import { databaseConfigSchema } from '@stoa/persistence';

const list = z.union([
  z.array(z.string()),
  z.string().transform((s) =>
    s
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean),
  ),
]);

/** `policy:` (reference GatewayPolicy) — globs on MCP tool names and on domain function names. */
export const gatewayPolicySchema = z
  .strictObject({
    /** Only these MCP tools (globs); null = every tool not blocked. */
    allowed_tools: list.nullable().default(null).meta({ env: 'GATEWAY_ALLOWED_TOOLS' }),
    /** MCP tools refused (globs). The reference's family names work too: check_job, parallel_execute, send, plan_workflow, load_skill. */
    blocked_tools: list.default([]).meta({ env: 'GATEWAY_BLOCKED_TOOLS' }),
    /** Domain functions callable from kernels (globs); null = all. Enforced inside the executor's kernel proxies. */
    allowed_functions: list.nullable().default(null).meta({ env: 'GATEWAY_ALLOWED_FUNCTIONS' }),
    blocked_functions: list.default([]).meta({ env: 'GATEWAY_BLOCKED_FUNCTIONS' }),
    /** Tool calls per principal per minute, shared by every gateway replica through Redis. */
    max_calls_per_minute: positiveInt.nullable().default(null).meta({ env: 'GATEWAY_MAX_CALLS_PER_MINUTE' }),
    /** Extra per-tool limits: {glob: calls per minute}. */
    tool_limits: z.record(z.string(), positiveInt).default({}),
  })
  .prefault({});
export type GatewayPolicy = z.output<typeof gatewayPolicySchema>;

/** The gateway's YAML (reference GatewayConfig, §8.1) plus auth, audit, database and rate-limit store. */
export const gatewayConfigSchema = z.strictObject({
  ...connectorFields,
  upstream: upstreamSchema,
  policy: gatewayPolicySchema,
  audit: auditConfigSchema,
  database: databaseConfigSchema,
  /** Redis for rate limits shared across replicas (REDIS_URL); unset → per-process limits. */
  redis_url: z.string().optional().meta({ env: 'REDIS_URL' }),
  data_dir: dataDirField,
  connectors: poolConfigSchema,
});
export type GatewayConfig = z.output<typeof gatewayConfigSchema>;

/** The reference's names for two audit keys (the audit schema is shared with the square, which has none). */
const AUDIT_ENV = { GATEWAY_STORE_CODE: 'audit.store_code', GATEWAY_AUDIT_RETENTION_DAYS: 'audit.retention_days' };

/** One upstream from `UPSTREAM_<NAME>_URL` (the reference's env form). */
function applyUpstreamEnv(raw: Record<string, unknown>, env: NodeJS.ProcessEnv): void {
  const found = Object.entries(env).filter(([k, v]) => /^UPSTREAM_[A-Za-z][A-Za-z0-9_]*_URL$/.test(k) && v);
  if (found.length > 1)
    throw new ConfigError('(environment)', [`a gateway has one upstream; found ${found.map(([k]) => k).join(', ')}`]);
  if (found.length === 1) {
    const [key, url] = found[0]!;
    const name = key.slice('UPSTREAM_'.length, -'_URL'.length).toLowerCase();
    const existing = (raw.upstream as Record<string, unknown> | undefined) ?? {};
    raw.upstream = { ...existing, name: existing.name ?? name, url };
  }
}

export interface GatewaySettings {
  config: GatewayConfig;
  baseDir: string;
}

export function loadGatewaySettings(
  file: ConfigSource,
  overrides: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
): GatewaySettings {
  const { config, baseDir } = loadConnectorConfig(
    gatewayConfigSchema,
    file,
    overrides,
    env,
    applyUpstreamEnv,
    AUDIT_ENV,
  );
  return { config, baseDir };
}
