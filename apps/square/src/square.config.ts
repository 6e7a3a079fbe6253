import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { z } from 'zod';
import { authConfigSchema, serverConfigSchema } from '@stoa/auth';
import { auditConfigSchema } from '@stoa/audit';
import { ConfigError, dataDirField, loadConfig, serverName, type ConfigSource } from '@stoa/config';
import {
  boardConfigSchema,
  chatConfigSchema,
  type CoordinationOptions,
  lockConfigSchema,
  presenceConfigSchema,
} from '@stoa/coordination';
import { databaseConfigSchema } from '@stoa/persistence';

/** The square's default port (ARCHITECTURE §1). */
export const SQUARE_PORT = 8040;

/** The square's YAML: listener, auth, database, Redis (replicas), and the plugins' limits. */
export const squareConfigSchema = z.strictObject({
  name: serverName.default('square'),
  description: z.string().default(''),
  server: serverConfigSchema,
  auth: authConfigSchema,
  database: databaseConfigSchema,
  /** Redis shared by replicas (event bus, rate limits); unset → one in-process square. REDIS_URL. */
  redis_url: z.string().optional().meta({ env: 'REDIS_URL' }),
  /** This replica's name in events and logs; default host:port. */
  replica: z.string().optional().meta({ env: 'SQUARE_REPLICA' }),
  data_dir: dataDirField,
  /** Onboarding text given to agents at initialize (the reference's --instructions FILE); default built in. */
  instructions_file: z.string().optional().meta({ env: 'SQUARE_INSTRUCTIONS_FILE' }),
  chat: chatConfigSchema,
  presence: presenceConfigSchema,
  board: boardConfigSchema,
  locks: lockConfigSchema,
  audit: auditConfigSchema,
});
export type SquareConfig = z.output<typeof squareConfigSchema>;

export interface SquareSettings {
  config: SquareConfig;
  dataDir: string;
  instructions: string;
  coordination: CoordinationOptions;
}

/** Loads square.yaml (+ env + CLI overrides); the port defaults to 8040. */
export function loadSquareSettings(
  file: ConfigSource,
  overrides: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
): SquareSettings {
  const { config, baseDir } = loadConfig({
    schema: squareConfigSchema,
    file,
    env,
    overrides,
    prepare: (raw) => {
      const server = (raw.server ?? {}) as Record<string, unknown>;
      raw.server = { port: SQUARE_PORT, ...server };
    },
  });
  const c = config;
  return {
    config: c,
    dataDir: resolve(c.data_dir),
    instructions: c.instructions_file ? readInstructions(resolve(baseDir, c.instructions_file)) : DEFAULT_INSTRUCTIONS,
    coordination: {
      name: c.name,
      replica: c.replica ?? `${hostname()}:${c.server.port}:${randomBytes(3).toString('hex')}`,
      redisUrl: c.redis_url,
      chat: c.chat,
      presence: c.presence,
      board: c.board,
      locks: c.locks,
    },
  };
}

function readInstructions(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(path, [`instructions_file: cannot read it (${(err as Error).message})`]);
  }
}

const DEFAULT_INSTRUCTIONS = `This is a coordination square shared by many agents.
1. Call register({name, role, capabilities}) once; it returns your agent_id. Your identity is your sign-in: if you
   run several agents, pass _agent_id in every other call.
2. Talk in channels: chat_post_message({channel, content}), chat_read_messages({channel, since, limit, order}),
   chat_list_channels(). New agents are welcomed in #general.
3. Wait instead of polling: chat_await_update({channel, nmsg, timeout}) returns when nmsg messages newer than the
   call arrive; signal_wait({kind, timeout}) when someone signals you (signal_send({to, kind, payload})).
4. Shared state: board_put({key, value, expected_version, schema}) / board_get / board_list / board_history.
   Exclusive work: lock_acquire({name, ttl_seconds, wait_seconds}) → a fencing_token; lock_release when done.`;
