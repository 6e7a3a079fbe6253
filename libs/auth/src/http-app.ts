import type { DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { Logger } from 'nestjs-pino';
import type pino from 'pino';
import { accessLog, StartupRefusedError } from '@stoa/core';
import { allowedHostsFor } from './bind';
import { installHttpBasics } from './http-basics';
import type { ServerConfig } from './server.config';

export interface HttpAppOptions {
  /** The process logger (the access log writes through it). */
  logger: pino.Logger;
  server: ServerConfig;
  /** Paths whose handlers read their own bodies (see installHttpBasics). */
  rawPaths?: readonly string[];
}

/** A Nest app with the app logger, the access log and the HTTP hardening every app installs, not yet listening. */
export async function createHttpApp(module: DynamicModule, opts: HttpAppOptions): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(module, { bodyParser: false, bufferLogs: true });
  app.useLogger(app.get(Logger));
  app.use(accessLog(opts.logger));
  installHttpBasics(app, {
    maxBodyBytes: opts.server.max_body_mb * 1024 * 1024,
    allowedHosts: allowedHostsFor(opts.server.host, opts.server.allowed_hosts),
    rawPaths: opts.rawPaths,
  });
  return app;
}

/** The OpenAPI document of an app's admin API. */
export function adminApiDocument(app: NestExpressApplication, title: string): OpenAPIObject {
  return SwaggerModule.createDocument(
    app,
    new DocumentBuilder().setTitle(title).setVersion('v1').addBearerAuth().build(),
  );
}

/** Serves the admin API's OpenAPI document at `/admin/docs` (JSON at `/admin/docs/json`). */
export function serveAdminDocs(app: NestExpressApplication, title: string): void {
  SwaggerModule.setup('admin/docs', app, adminApiDocument(app, title), { jsonDocumentUrl: 'admin/docs/json' });
}

/** Listens on the configured address; the base URL with `[::1]` written as 127.0.0.1. */
export async function listenOn(app: NestExpressApplication, server: ServerConfig): Promise<string> {
  try {
    await app.listen(server.port, server.host);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    throw new StartupRefusedError(
      `${server.host}:${server.port} is already in use (another Stoa app or another program listens there). ` +
        'Stop it, or choose a free port: --port, PORT (connectors also CONNECTOR_PORT) or server.port in the YAML.',
    );
  }
  return (await app.getUrl()).replace('[::1]', '127.0.0.1');
}

/** A built app, not yet listening: what every app's bootstrap returns (main.ts and embeddings use it alike). */
export interface ServerApp {
  app: NestExpressApplication;
  /** Listens (on `port` instead of server.port when given); the base URL. */
  listen: (port?: number) => Promise<string>;
  /** Stops the app and whatever it started. */
  close: () => Promise<void>;
}

/** {@link ServerApp} of a Nest app listening where `server` says; `close` defaults to the app's own. */
export function serverApp(
  app: NestExpressApplication,
  server: ServerConfig,
  close: () => Promise<void> = () => app.close(),
): ServerApp {
  return {
    app,
    listen: (port) => listenOn(app, port === undefined ? server : { ...server, port }),
    close,
  };
}
