import { z } from 'zod';
import { activityPublisherConfigSchema, metricsConfigSchema, tracingConfigSchema } from '@stoa/activity';
import { authConfigSchema, serverConfigSchema } from '@stoa/auth';
import { loadConfig, serverName, type LoadedConfig, type ConfigSource } from '@stoa/config';

/**
 * The keys every connector's YAML has (reference §8.8 env names plus ours): name, listener, auth, observability.
 * A connector's schema spreads these and adds its own.
 */
export const connectorFields = {
  name: serverName.meta({ env: 'CONNECTOR_NAME' }),
  description: z.string().default(''),
  server: serverConfigSchema,
  auth: authConfigSchema,
  activity: activityPublisherConfigSchema,
  metrics: metricsConfigSchema,
  tracing: tracingConfigSchema,
};

/**
 * Loads a connector's YAML + env + CLI overrides. Besides the names the schema declares: the reference's
 * `CONNECTOR_ALLOW_NOOP_AUTH` (same acknowledgement as STOA_ALLOW_UNAUTHENTICATED_REMOTE) and `CONNECTOR_PORT`
 * (fallback `MCP_SERVER_PORT`); `prepare` adds the connector's structural env rules (`UPSTREAM_<NAME>_URL`, …).
 */
export function loadConnectorConfig<S extends z.ZodType>(
  schema: S,
  file: ConfigSource,
  overrides: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
  prepare: (raw: Record<string, unknown>, env: NodeJS.ProcessEnv) => void,
  envMap: Readonly<Record<string, string>> = {},
): LoadedConfig<z.output<S>> {
  return loadConfig({
    schema,
    file,
    env,
    envMap: { CONNECTOR_ALLOW_NOOP_AUTH: 'server.allow_unauthenticated_remote', ...envMap },
    overrides,
    prepare: (raw, e) => {
      prepare(raw, e);
      const port = e.CONNECTOR_PORT ?? e.MCP_SERVER_PORT;
      if (port) raw.server = { ...(raw.server ?? {}), port };
    },
  });
}

/** A connector's `--help` text: the shared flags, then the env variables it reads (`env`) after the common ones. */
export function connectorUsage(kind: 'router' | 'gateway' | 'dispatcher', env: string): string {
  return `Usage: node dist/apps/${kind}/main.js --config <${kind}.yaml> [--host H] [--port P] [--allow-unauthenticated-remote]
Env: STOA_CONFIG, CONNECTOR_NAME, CONNECTOR_PORT, HOST, PORT, ${env}, ENTRA_CLIENT_ID, … (see .env.example)`;
}

/** CLI overrides of a connector; one started without a file or CONNECTOR_NAME is named `connector`. */
export function connectorOverrides(
  cli: { file: string | undefined; overrides: Record<string, unknown> },
  env: NodeJS.ProcessEnv,
): Record<string, unknown> {
  return { name: !cli.file && !env.CONNECTOR_NAME ? 'connector' : undefined, ...cli.overrides };
}
