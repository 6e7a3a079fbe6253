import {
  ACTIVITY_ENV,
  activityPublisherConfigSchema,
  metricsConfigSchema,
  TELEMETRY_ENV,
  tracingConfigSchema,
} from '@stoa/activity';
import { AUTH_ENV } from '@stoa/auth';

/** Env names every connector reads (reference §8.8 plus ours), mapped to config paths. */
export const CONNECTOR_ENV = {
  CONNECTOR_NAME: 'name',
  HOST: 'server.host',
  PORT: 'server.port',
  PUBLIC_BASE_URL: 'server.public_url',
  STOA_ALLOW_UNAUTHENTICATED_REMOTE: 'server.allow_unauthenticated_remote',
  CONNECTOR_ALLOW_NOOP_AUTH: 'server.allow_unauthenticated_remote', // the reference's name for the same acknowledgement
  ...AUTH_ENV,
  ...ACTIVITY_ENV,
  ...TELEMETRY_ENV,
} as const;

/** `activity:`, `metrics:` and `tracing:` — the observability keys every connector's YAML has. */
export const connectorObservabilityFields = {
  activity: activityPublisherConfigSchema,
  metrics: metricsConfigSchema,
  tracing: tracingConfigSchema,
};

/** `CONNECTOR_PORT` (fallback `MCP_SERVER_PORT`) sets the listener port, as in the reference. */
export function applyConnectorPort(raw: Record<string, unknown>, env: NodeJS.ProcessEnv): void {
  const port = env.CONNECTOR_PORT ?? env.MCP_SERVER_PORT;
  if (port) raw.server = { ...(raw.server ?? {}), port };
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
