import { z } from 'zod';
import { boolish, ConfigError, positiveInt, serverName, type ConfigSource } from '@stoa/config';
import { connectorFields, loadConnectorConfig, poolConfigSchema, upstreamAuthSchema } from '@stoa/connectors';

/** One worker (reference WorkerConfig): an identical executor replica. */
const workerSchema = z.strictObject({
  name: serverName,
  url: z.url(),
  weight: positiveInt.default(1),
});

/** The dispatcher's YAML (reference DispatcherConfig, §8.1) plus auth and the shared affinity settings. */
export const dispatcherConfigSchema = z
  .strictObject({
    ...connectorFields,
    workers: z
      .array(workerSchema)
      .min(1, 'a dispatcher needs at least one worker (workers: in YAML, WORKER_<NAME>_URL or WORKER_URLS)'),
    strategy: z
      .enum(['round_robin', 'least_loaded', 'sticky_session'])
      .default('round_robin')
      .meta({ env: 'DISPATCHER_STRATEGY' }),
    session_affinity: boolish.default(true).meta({ env: 'DISPATCHER_SESSION_AFFINITY' }),
    /** Seconds between worker health checks. */
    health_check_interval: z.coerce.number().positive().default(10).meta({ env: 'DISPATCHER_HEALTH_CHECK_INTERVAL' }),
    worker_failure_policy: z.enum(['error', 'reroute']).default('error').meta({ env: 'DISPATCHER_FAILURE_POLICY' }),
    /** How the dispatcher authenticates to workers (same modes as router upstreams). */
    worker_auth: upstreamAuthSchema,
    /** The workers' `sessions.id_signing_key`: lets any dispatcher replica read a session's worker from its id. */
    session_key: z.string().min(16).optional().meta({ env: 'STOA_SESSION_KEY' }),
    /** Redis for affinity of 2025-era `Mcp-Session-Id` traffic and job ownership, shared by dispatcher replicas. */
    redis_url: z.string().optional().meta({ env: 'REDIS_URL' }),
    /**
     * Largest `POST /object-transfer/receive` body relayed to a worker (the base64 JSON, so ~4/3 of the object); a
     * body whose `session_id` comes after its data is held on disk until the id is read. Workers apply their own cap.
     */
    transfer_max_mb: positiveInt.default(350).meta({ env: 'DISPATCHER_TRANSFER_MAX_MB' }),
    connectors: poolConfigSchema,
  })
  .superRefine((c, ctx) => {
    if (c.strategy === 'sticky_session' && !c.session_affinity)
      ctx.addIssue({
        code: 'custom',
        path: ['strategy'],
        message: "strategy='sticky_session' requires session_affinity=True",
      });
    const names = new Set<string>();
    for (const w of c.workers) {
      if (names.has(w.name))
        ctx.addIssue({ code: 'custom', path: ['workers'], message: `duplicate worker name '${w.name}'` });
      names.add(w.name);
    }
  });
export type DispatcherConfig = z.output<typeof dispatcherConfigSchema>;

/** `WORKER_<NAME>_URL` (+ `WORKER_<NAME>_WEIGHT`) and `WORKER_URLS` (comma list, named worker1…), reference §8.8. */
function applyWorkerEnv(raw: Record<string, unknown>, env: NodeJS.ProcessEnv): void {
  const problems: string[] = [];
  const workers: { name: string; url: string; weight?: string }[] = [];
  for (const [key, value] of Object.entries(env)) {
    const m = /^WORKER_(.+)_URL$/.exec(key);
    if (!m || key === 'WORKER_URLS') continue;
    if (!/^[A-Za-z][A-Za-z0-9_]*$/.test(m[1]!)) problems.push(`${key}: <NAME> must match [A-Za-z][A-Za-z0-9_]*`);
    else if (!value) problems.push(`${key}: empty URL`);
    else workers.push({ name: m[1]!.toLowerCase(), url: value, weight: env[`WORKER_${m[1]}_WEIGHT`] });
  }
  for (const [key, value] of Object.entries(env)) {
    const m = /^WORKER_(.+)_WEIGHT$/.exec(key);
    if (m && !env[`WORKER_${m[1]}_URL`]) problems.push(`${key}: no matching WORKER_${m[1]}_URL`);
    else if (m && !/^[1-9]\d*$/.test(value ?? '')) problems.push(`${key}: weight must be an integer >= 1`);
  }
  (env.WORKER_URLS ?? '')
    .split(',')
    .map((u) => u.trim())
    .filter(Boolean)
    .forEach((url, i) => workers.push({ name: `worker${i + 1}`, url }));
  if (problems.length) throw new ConfigError('(environment)', problems);
  if (workers.length) {
    raw.workers = workers
      .sort((a, b) => a.name.localeCompare(b.name))
      .map((w) => ({ name: w.name, url: w.url, ...(w.weight ? { weight: Number(w.weight) } : {}) }));
  }
}

export interface DispatcherSettings {
  config: DispatcherConfig;
  baseDir: string;
}

export function loadDispatcherSettings(
  file: ConfigSource,
  overrides: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
): DispatcherSettings {
  const { config, baseDir } = loadConnectorConfig(dispatcherConfigSchema, file, overrides, env, applyWorkerEnv);
  return { config, baseDir };
}
