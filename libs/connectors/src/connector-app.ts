import 'reflect-metadata';
import type { RequestHandler } from 'express';
import { parseArgs } from 'node:util';
import { Injectable, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { Logger } from 'nestjs-pino';
import pino from 'pino';
import { allowedHostsFor, installHttpBasics, unauthenticatedRemoteRefusal, type AuthConfig, type ServerConfig } from '@stoa/auth';
import { accessLog, isAppError, REDACTED_PATHS } from '@stoa/core';
import { UpstreamPool } from './upstream-pool';

/** Closes a connector's upstream pool (connections, timers) on shutdown. */
@Injectable()
export class PoolLifecycle implements OnApplicationShutdown {
  constructor(private readonly pool: UpstreamPool) {}

  async onApplicationShutdown(): Promise<void> {
    await this.pool.close();
  }
}

/** What differs between the router, gateway and dispatcher entry points. */
export interface ConnectorAppSpec<S extends { config: { name: string; server: ServerConfig; auth: AuthConfig } }> {
  kind: 'router' | 'gateway' | 'dispatcher';
  /** Env variables listed in --help after the common ones. */
  env: string;
  load: (file: string | undefined, overrides: Record<string, unknown>, env: NodeJS.ProcessEnv) => S;
  module: (settings: S) => DynamicModule;
  /** The express middleware in front of Nest for the connector's hot path. */
  fastPath: (app: NestExpressApplication) => RequestHandler;
  /** Extra fields for the "listening" log line. */
  describe: (settings: S) => Record<string, unknown>;
}

/**
 * A connector's `main`: CLI flags, config (YAML + env), the no-op remote refusal, HTTP hardening, the fast path,
 * the admin OpenAPI document, graceful SIGTERM/SIGINT, and a buffered access log flushed on every exit path.
 */
export function runConnectorApp<S extends { config: { name: string; server: ServerConfig; auth: AuthConfig } }>(spec: ConnectorAppSpec<S>): void {
  const fail = (message: string): never => {
    process.stderr.write(`${message}\n`);
    process.exit(2);
  };
  const usage = `Usage: node dist/apps/${spec.kind}/main.js --config <${spec.kind}.yaml> [--host H] [--port P] [--allow-unauthenticated-remote]
Env: STOA_CONFIG, CONNECTOR_NAME, CONNECTOR_PORT, HOST, PORT, ${spec.env}, ENTRA_CLIENT_ID, … (see .env.example)`;

  const settingsFromCli = (): S => {
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
      return fail(`${(err as Error).message}\n${usage}`);
    }
    if (values.help) {
      process.stdout.write(`${usage}\n`);
      process.exit(0);
    }
    const file = values.config ?? process.env.STOA_CONFIG;
    try {
      return spec.load(
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
  };

  const main = async (): Promise<void> => {
    // Buffered access log (one write per ~4 KB instead of one per request); flushed on every exit path.
    const dest = pino.destination({ dest: 1, sync: false, minLength: 4096 });
    process.on('exit', () => dest.flushSync());
    const logger = pino({ name: `stoa-${spec.kind}`, level: process.env.LOG_LEVEL ?? 'info', redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }, dest);
    const settings = settingsFromCli();
    const { server, name, auth } = settings.config;
    if (auth.mode === 'noop') {
      const refusal = unauthenticatedRemoteRefusal(server.host);
      if (refusal && !server.allow_unauthenticated_remote) fail(refusal);
    }
    const app = await NestFactory.create<NestExpressApplication>(spec.module(settings), { bodyParser: false, bufferLogs: true });
    app.useLogger(app.get(Logger));
    app.use(accessLog(logger));
    installHttpBasics(app, { maxBodyBytes: server.max_body_mb * 1024 * 1024, allowedHosts: allowedHostsFor(server.host, server.allowed_hosts) });
    app.use(spec.fastPath(app));
    const doc = new DocumentBuilder().setTitle(`Stoa ${spec.kind} '${name}' admin API`).setVersion('v1').addBearerAuth().build();
    SwaggerModule.setup('admin/docs', app, SwaggerModule.createDocument(app, doc), { jsonDocumentUrl: 'admin/docs/json' });
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
    logger.info({ [spec.kind]: name, url: `${url}/mcp`, ...spec.describe(settings) }, `${name} ${spec.kind} listening`);
  };

  main().catch((err: unknown) => {
    const label = spec.kind[0]!.toUpperCase() + spec.kind.slice(1);
    process.stderr.write(`${label} failed to start: ${isAppError(err) ? err.message : err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
}
