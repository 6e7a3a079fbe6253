import 'reflect-metadata';
import type { LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import pino from 'pino';
import { refuseOpenNoopBind, noopPrincipal } from '@stoa/auth';
import { parseCli } from '@stoa/config';
import { closeOnSignals, refuseStartOn, runMain, StartupRefusedError, startupLogger } from '@stoa/core';
import { serveMcpStdio } from '@stoa/mcp';
import { loadSquareSettings } from './square.config';
import { SquareModule } from './square.module';
import { SquareMcpService } from './square-mcp.service';
import { createSquareApp } from './square.bootstrap';

const USAGE = `Usage: node dist/apps/square/main.js [--config <square.yaml>] [--host H] [--port P] [--stdio]
       [--allow-unauthenticated-remote]
  --stdio  serve MCP on stdin/stdout (a local agent starts the square itself); logs go to stderr
Env: STOA_CONFIG, HOST, PORT, DATABASE_URL, REDIS_URL, STOA_DATA_DIR, SQUARE_* (see .env.example)`;

runMain('Square', async () => {
  const cli = parseCli(USAGE, ['stdio']);
  if (cli.help) return void process.stdout.write(`${USAGE}\n`);
  const settings = refuseStartOn(() => loadSquareSettings(cli.file, cli.overrides, process.env));
  const { name, auth } = settings.config;
  if (cli.flags.stdio) {
    // stdout carries the protocol: nothing else may write there.
    if (auth.mode === 'entra')
      throw new StartupRefusedError(
        'stdio has no bearer token to verify, so it cannot run with Entra ID auth. Serve HTTP (drop --stdio) or use a config with no-op auth for a local square.',
      );
    const app = await NestFactory.createApplicationContext(SquareModule.forRoot(settings, { http: false }), {
      logger: stderrLogger(),
    });
    app.enableShutdownHooks();
    // The local user: the same principal a tokenless no-op HTTP caller gets, so both see the same agents.
    await serveMcpStdio(app.get(SquareMcpService).endpoint, noopPrincipal(undefined));
    await app.close();
    return;
  }
  const logger = startupLogger('stoa-square', 'sync');
  refuseOpenNoopBind(settings.config);
  const { listen, close } = await createSquareApp(settings, logger);
  closeOnSignals(logger, close);
  const url = await listen();
  logger.info(
    {
      square: name,
      url: `${url}/mcp`,
      replica: settings.coordination.replica,
      bus: settings.coordination.redisUrl ? 'redis' : 'in-process',
    },
    `${name} square listening`,
  );
});

/** Nest's logger in stdio mode: JSON lines on stderr (stdout carries the protocol). */
function stderrLogger(): LoggerService {
  const log = pino(
    { name: 'stoa-square', level: process.env.LOG_LEVEL ?? 'warn' },
    pino.destination({ dest: 2, sync: true }),
  );
  const at =
    (level: 'info' | 'warn' | 'error' | 'debug') =>
    (message: unknown, ...rest: unknown[]) => {
      const text = [message, ...rest].filter((x): x is string => typeof x === 'string').join(' ');
      log[level](message && typeof message === 'object' ? message : {}, text);
    };
  return { log: at('info'), warn: at('warn'), error: at('error'), debug: at('debug'), verbose: at('debug') };
}
