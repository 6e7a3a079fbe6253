import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Logger } from 'nestjs-pino';
import pino from 'pino';
import { allowedHostsFor, installHttpBasics, unauthenticatedRemoteRefusal } from '@stoa/auth';
import { accessLog, isAppError, REDACTED_PATHS } from '@stoa/core';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { OpenApiDocument } from './admin.controller';
import { ExecutorModule } from './executor.module';
import { loadExecutorSettings, type ExecutorSettings } from './executor.config';
import { provision } from './provisioning';

const USAGE = `Usage: node dist/apps/executor/main.js --config <server.yaml> [--host H] [--port P]
       [--allow-unauthenticated-remote] [--warm]
Env: STOA_CONFIG, HOST, PORT, DATABASE_URL, STOA_DATA_DIR, STOA_PYTHON, … (see .env.example)`;

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(2);
}

function settingsFromCli(logger: pino.Logger): { settings: ExecutorSettings; warm: boolean } {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        config: { type: 'string', short: 'c' },
        host: { type: 'string' },
        port: { type: 'string' },
        'allow-unauthenticated-remote': { type: 'boolean' },
        warm: { type: 'boolean' },
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
  if (!file) fail(`No config file: pass --config <server.yaml> or set STOA_CONFIG.\n${USAGE}`);
  try {
    const settings = loadExecutorSettings(
      file,
      {
        'server.host': values.host,
        'server.port': values.port,
        'server.allow_unauthenticated_remote': values['allow-unauthenticated-remote'] ? true : undefined,
      },
      process.env,
      (msg) => logger.warn(msg),
    );
    return { settings, warm: values.warm ?? false };
  } catch (err) {
    if (isAppError(err)) fail(err.message);
    throw err;
  }
}

async function main(): Promise<void> {
  // Synchronous stdout: lines are never lost when the process exits (SIGTERM ends with process.exit).
  const logger = pino({ name: 'stoa-executor', level: process.env.LOG_LEVEL ?? 'info', redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }, pino.destination({ dest: 1, sync: true }));
  const { settings, warm } = settingsFromCli(logger);
  const { server, name, auth } = settings.config;
  if (auth.mode === 'noop') {
    const refusal = unauthenticatedRemoteRefusal(server.host);
    if (refusal && !server.allow_unauthenticated_remote) fail(refusal);
  }
  const { sidecars } = await provision(settings, (msg) => logger.info({ server: name }, msg), { warm });
  if (warm) {
    process.stdout.write(`✓ Environment '${name}' is warm and ready.\n`);
    return;
  }
  let app: NestExpressApplication;
  try {
    app = await NestFactory.create<NestExpressApplication>(ExecutorModule.forRoot(settings), { bodyParser: false, bufferLogs: true });
  } catch (err) {
    await sidecars.stop();
    throw err;
  }
  app.useLogger(app.get(Logger));
  app.use(accessLog(logger));
  installHttpBasics(app, { maxBodyBytes: server.max_body_mb * 1024 * 1024, allowedHosts: allowedHostsFor(server.host, server.allowed_hosts), rawPaths: ['/object-transfer/receive'] });
  app.get(OpenApiDocument).document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder().setTitle(`Stoa executor '${name}' admin API`).setVersion('v1').addBearerAuth().build(),
  );
  shutdownOn(['SIGTERM', 'SIGINT'], async () => {
    await app.close(); // kernels (pooled ones too) reaped, sessions marked
    await sidecars.stop();
  }, logger);
  await app.listen(server.port, server.host);
  const url = await app.getUrl();
  if (!server.public_url) settings.publicUrl.value = url.replace('[::1]', '127.0.0.1').replace('0.0.0.0', '127.0.0.1');
  logger.info({ server: name, url: `${url.replace('[::1]', '127.0.0.1')}/mcp`, replica: settings.replica }, `${name} executor listening`);
}

/** Graceful stop: close the app (kernels reaped, sessions marked), then exit 0; a second signal or 10 s forces exit. */
function shutdownOn(signals: NodeJS.Signals[], close: () => Promise<void>, logger: pino.Logger): void {
  let stopping = false;
  for (const signal of signals) {
    process.on(signal, () => {
      if (stopping) process.exit(1);
      stopping = true;
      logger.info({ signal }, 'shutting down');
      setTimeout(() => process.exit(1), 10_000).unref();
      close().then(
        () => process.exit(0),
        (err: unknown) => {
          logger.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
    });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`Executor failed to start: ${isAppError(err) ? err.message : err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
