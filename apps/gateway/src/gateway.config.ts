import { z } from 'zod';
import { authConfigSchema, serverConfigSchema } from '@stoa/auth';
import { auditConfigSchema } from '@stoa/audit';
import { ConfigError, loadConfig, positiveInt, serverName } from '@stoa/config';
import {
  applyConnectorPort,
  CONNECTOR_ENV,
  connectorObservabilityFields,
  poolConfigSchema,
  upstreamSchema,
} from '@stoa/connectors';
import { DATABASE_ENV, databaseConfigSchema } from '@stoa/persistence';

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
    allowed_tools: list.nullable().default(null),
    /** MCP tools refused (globs). The reference's family names work too: check_job, parallel_execute, send, plan_workflow, load_skill. */
    blocked_tools: list.default([]),
    /** Domain functions callable from kernels (globs); null = all. Enforced inside the executor's kernel proxies. */
    allowed_functions: list.nullable().default(null),
    blocked_functions: list.default([]),
    /** Tool calls per principal per minute, shared by every gateway replica through Redis. */
    max_calls_per_minute: positiveInt.nullable().default(null),
    /** Extra per-tool limits: {glob: calls per minute}. */
    tool_limits: z.record(z.string(), positiveInt).default({}),
  })
  .prefault({});
export type GatewayPolicy = z.output<typeof gatewayPolicySchema>;

/** The gateway's YAML (reference GatewayConfig, §8.1) plus auth, audit, database and rate-limit store. */
export const gatewayConfigSchema = z.strictObject({
  name: serverName,
  description: z.string().default(''),
  server: serverConfigSchema,
  auth: authConfigSchema,
  upstream: upstreamSchema,
  policy: gatewayPolicySchema,
  audit: auditConfigSchema,
  database: databaseConfigSchema,
  /** Redis for rate limits shared across replicas (REDIS_URL); unset → per-process limits. */
  redis_url: z.string().optional(),
  data_dir: z.string().default('./data'),
  connectors: poolConfigSchema,
  ...connectorObservabilityFields,
});
export type GatewayConfig = z.output<typeof gatewayConfigSchema>;

const ENV_MAP = {
  ...CONNECTOR_ENV,
  GATEWAY_ALLOWED_TOOLS: 'policy.allowed_tools',
  GATEWAY_BLOCKED_TOOLS: 'policy.blocked_tools',
  GATEWAY_ALLOWED_FUNCTIONS: 'policy.allowed_functions',
  GATEWAY_BLOCKED_FUNCTIONS: 'policy.blocked_functions',
  GATEWAY_MAX_CALLS_PER_MINUTE: 'policy.max_calls_per_minute',
  GATEWAY_STORE_CODE: 'audit.store_code',
  GATEWAY_AUDIT_RETENTION_DAYS: 'audit.retention_days',
  REDIS_URL: 'redis_url',
  STOA_DATA_DIR: 'data_dir',
  ...DATABASE_ENV,
};

/** One upstream from `UPSTREAM_<NAME>_URL` (the reference's env form); `CONNECTOR_PORT` / `MCP_SERVER_PORT`. */
function applyConnectorEnv(raw: Record<string, unknown>, env: NodeJS.ProcessEnv): void {
  const found = Object.entries(env).filter(([k, v]) => /^UPSTREAM_[A-Za-z][A-Za-z0-9_]*_URL$/.test(k) && v);
  if (found.length > 1)
    throw new ConfigError('(environment)', [`a gateway has one upstream; found ${found.map(([k]) => k).join(', ')}`]);
  if (found.length === 1) {
    const [key, url] = found[0]!;
    const name = key.slice('UPSTREAM_'.length, -'_URL'.length).toLowerCase();
    const existing = (raw.upstream as Record<string, unknown> | undefined) ?? {};
    raw.upstream = { ...existing, name: existing.name ?? name, url };
  }
  applyConnectorPort(raw, env);
}

export interface GatewaySettings {
  config: GatewayConfig;
  baseDir: string;
}

export function loadGatewaySettings(
  file: string | undefined,
  overrides: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
): GatewaySettings {
  const { config, baseDir } = loadConfig({
    schema: gatewayConfigSchema,
    file,
    env,
    envMap: ENV_MAP,
    overrides,
    prepare: applyConnectorEnv,
  });
  return { config, baseDir };
}
