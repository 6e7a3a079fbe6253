import { z } from 'zod';
import { metricsConfigSchema, tracingConfigSchema } from '@stoa/activity';
import { authConfigSchema, serverConfigSchema } from '@stoa/auth';
import { dataDirField, loadConfig, positiveInt } from '@stoa/config';
import { databaseConfigSchema } from '@stoa/persistence';

const hours = z.coerce.number().positive();

/** The activity app's YAML: listener (127.0.0.1:8030), auth, database, Redis, ingest and stream limits. */
export const activityConfigSchema = z.strictObject({
  /** Names this dashboard (page title, Redis channel). */
  name: z.string().min(1).max(100).default('stoa'),
  server: serverConfigSchema,
  auth: authConfigSchema,
  metrics: metricsConfigSchema,
  tracing: tracingConfigSchema,
  database: databaseConfigSchema,
  data_dir: dataDirField,
  /** Redis for the live stream across replicas (REDIS_URL); unset → one process. */
  redis_url: z.string().optional().meta({ env: 'REDIS_URL' }),
  ingest: z
    .strictObject({
      /** Entra mode: the app role a writer's token must carry (reference: ActivityEventWriter). */
      writer_role: z.string().default('ActivityEventWriter'),
      /** No-op mode: the bearer secret writers on loopback send (ACTIVITY_UI_SECRET); required in no-op mode. */
      writer_secret: z.string().min(16, 'use at least 16 characters').optional().meta({ env: 'ACTIVITY_UI_SECRET' }),
      max_batch_events: positiveInt.default(500),
      /** One event's JSON, figures included. */
      max_event_bytes: positiveInt.default(4 * 1024 * 1024),
    })
    .prefault({}),
  stream: z
    .strictObject({
      /** Events replayed to a new stream (the newest of the replay window). */
      replay_limit: positiveInt.default(1000),
      /** How far back a new stream replays. */
      replay_hours: hours.default(24),
      heartbeat_seconds: positiveInt.default(15),
      /** Events a client may fall behind by before it is dropped (it resumes from the store on reconnect). */
      client_buffer_events: positiveInt.default(100),
      /** Bytes buffered for a client before it is dropped. */
      client_buffer_bytes: positiveInt.default(8 * 1024 * 1024),
      token_ttl_seconds: positiveInt.default(300).meta({ env: 'ACTIVITY_UI_STREAM_TOKEN_TTL' }),
      /** Signs stream tokens (ACTIVITY_UI_STREAM_SECRET); replicas behind one URL must share it. Default: random per process. */
      token_secret: z
        .string()
        .min(32, 'use at least 32 characters')
        .optional()
        .meta({ env: 'ACTIVITY_UI_STREAM_SECRET' }),
    })
    .prefault({}),
  /** Events older than this are deleted. */
  retention_hours: hours.default(24).meta({ env: 'ACTIVITY_UI_RETENTION_HOURS' }),
  sweep_interval_seconds: positiveInt.default(600),
  /** Where the dashboard's files are; default the ones built with the app. */
  dashboard_dir: z.string().optional(),
});
export type ActivityConfig = z.output<typeof activityConfigSchema>;

/** The reference's names for the activity UI's listener. */
const ENV_MAP = { ACTIVITY_UI_HOST: 'server.host', ACTIVITY_UI_PORT: 'server.port' };

/** Loads and validates the activity app's config (file optional; port 8030 unless set). */
export function loadActivityConfig(
  file: string | undefined,
  overrides: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
): ActivityConfig {
  return loadConfig({
    schema: activityConfigSchema,
    file,
    env,
    envMap: ENV_MAP,
    overrides,
    prepare: (raw) => {
      const server = (raw.server ??= {}) as Record<string, unknown>;
      server.port ??= 8030;
      // Batches carry figures: room for a few megabytes per POST.
      server.max_body_mb ??= 16;
    },
  }).config;
}
