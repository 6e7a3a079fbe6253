import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { Logger } from 'nestjs-pino';
import pino from 'pino';
import { allowedHostsFor, installHttpBasics, PrincipalResolver, unauthenticatedRemoteRefusal } from '@stoa/auth';
import { UpstreamPool } from '@stoa/connectors';
import { accessLog, isAppError, REDACTED_PATHS } from '@stoa/core';
import { loadDispatcherSettings, type DispatcherSettings } from './dispatcher.config';
import { DispatcherModule } from './dispatcher.module';
import { DispatchService } from './dispatch.service';
import { dispatcherFastPath } from './fast-path';

const USAGE = `Usage: node dist/apps/dispatcher/main.js --config <dispatcher.yaml> [--host H] [--port P] [--allow-unauthenticated-remote]
Env: STOA_CONFIG, UPSTREAM_<NAME>_URL, CONNECTOR_NAME, CONNECTOR_PORT, WORKER_<NAME>_URL, WORKER_URLS, DISPATCHER_*, STOA_SESSION_KEY, REDIS_URL, ENTRA_CLIENT_ID, … (see .env.example)`;

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(2);
}

function settingsFromCli(): DispatcherSettings {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        config: { type: 'string', short: 'c' },
        host: { type: 'string' },
        port: { type: 'string' },
        'allow-unauthenticated-remote': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (err) {
    fail(`${(err as Error).message}\n${USAGE}`);
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const file = values.config ?? process.env.STOA_CONFIG;
  try {
    return loadDispatcherSettings(
      file,
      {
        name: !file && !process.env.CONNECTOR_NAME ? 'connector' : undefined,
        'server.host': values.host,
        'server.port': values.port,
        'server.allow_unauthenticated_remote': values['allow-unauthenticated-remote'] ? true : undefined,
      },
      process.env,
    );
  } catch (err) {
    if (isAppError(err)) fail(err.message);
    throw err;
  }
}

async function main(): Promise<void> {
  // Buffered access log (one write per ~4 KB instead of one per request); flushed on every exit path.
  const dest = pino.destination({ dest: 1, sync: false, minLength: 4096 });
  process.on('exit', () => dest.flushSync());
  const logger = pino({ name: 'stoa-dispatcher', level: process.env.LOG_LEVEL ?? 'info', redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }, dest);
  const settings = settingsFromCli();
  const { server, name, auth } = settings.config;
  if (auth.mode === 'noop') {
    const refusal = unauthenticatedRemoteRefusal(server.host);
    if (refusal && !server.allow_unauthenticated_remote) fail(refusal);
  }
  const app = await NestFactory.create<NestExpressApplication>(DispatcherModule.forRoot(settings), { bodyParser: false, bufferLogs: true });
  app.useLogger(app.get(Logger));
  app.use(accessLog(logger));
  installHttpBasics(app, { maxBodyBytes: server.max_body_mb * 1024 * 1024, allowedHosts: allowedHostsFor(server.host, server.allowed_hosts) });
  app.use(dispatcherFastPath(app.get(DispatchService), app.get(UpstreamPool), app.get(PrincipalResolver)));
  SwaggerModule.setup('admin/docs', app, SwaggerModule.createDocument(app, new DocumentBuilder().setTitle(`Stoa dispatcher '${name}' admin API`).setVersion('v1').addBearerAuth().build()), { jsonDocumentUrl: 'admin/docs/json' });
  let stopping = false;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (stopping) process.exit(1);
      stopping = true;
      logger.info({ signal }, 'shutting down');
      setTimeout(() => process.exit(1), 10_000).unref();
      app.close().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    });
  }
  await app.listen(server.port, server.host);
  const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  logger.info({ dispatcher: name, url: `${url}/mcp`, workers: settings.config.workers.map((w) => w.name), strategy: settings.config.strategy }, `${name} dispatcher listening`);
}

main().catch((err: unknown) => {
  process.stderr.write(`Dispatcher failed to start: ${isAppError(err) ? err.message : err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
