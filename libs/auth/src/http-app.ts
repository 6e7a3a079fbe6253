import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import helmet from 'helmet';
import { Logger } from 'nestjs-pino';
import type pino from 'pino';
import { accessLog, StartupRefusedError } from '@stoa/core';
import { allowedHostsFor } from './bind';
import { hostGuard, jsonBodyReader, type RawHandler } from './http-basics';
import { sendError } from './http-error.filter';
import type { ServerConfig } from './server.config';

export interface HttpAppOptions {
  /** The process logger (the access log writes through it). */
  logger: pino.Logger;
  server: ServerConfig;
  /** Paths whose handlers read their own bodies (see jsonBodyReader). */
  rawPaths?: readonly string[];
  /** Requests served before Express and Nest (a hot path); built once the app exists. */
  front?: (app: NestExpressApplication) => FrontDoor;
}

/**
 * A hot path in front of the framework. The access log and the Host/Origin checks run first, as for every request;
 * a request it `takes` then has its JSON body read (same limits and refusals) and goes through `handlers` in turn.
 * Each serves it or calls `next()`: after the last, Express and Nest get it (body read, so not read again) — the
 * guarded route then answers with its proper 401, 404 or refusal. Express's middleware stack, request decoration
 * and Nest's guard chain cost ~0.8 ms of a 2 ms tool call on a 2-core VM (an executor's CPU per call fell from
 * 0.30–0.42 to 0.12–0.16 ms, a router's per routed call from 0.37–0.54 to 0.26–0.28 ms: bench/RESULTS.md, stop 42).
 */
export interface FrontDoor {
  takes: (req: IncomingMessage) => boolean;
  handlers: readonly RawHandler[];
}

/**
 * A Nest app with the app logger, the access log and the HTTP hardening every app installs (and its front door, if
 * any), not yet listening. The access log and the Host/Origin checks run on Node's own request before Express.
 */
export async function createHttpApp(module: DynamicModule, opts: HttpAppOptions): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(module, { bodyParser: false, bufferLogs: true });
  app.useLogger(app.get(Logger));
  app.disable('x-powered-by');
  app.use('/admin', helmet());
  const basics = {
    maxBodyBytes: opts.server.max_body_mb * 1024 * 1024,
    allowedHosts: allowedHostsFor(opts.server.host, opts.server.allowed_hosts),
    rawPaths: opts.rawPaths,
  };
  const readBody = jsonBodyReader(basics);
  app.use(readBody);
  serveFirst(app, [accessLog(opts.logger), hostGuard(basics.allowedHosts)], readBody, opts.front?.(app), opts.logger);
  return app;
}

/** What a server's `request` event calls: the access log, the Host checks, the front door, then Express and Nest. */
export type RequestHandler = (req: IncomingMessage, res: ServerResponse, done?: (err?: unknown) => void) => void;
const handlers = new WeakMap<NestExpressApplication, RequestHandler>();

/** The whole request handler of an app made by createHttpApp, to mount in another Express app (embedding). */
export function requestHandler(app: NestExpressApplication): RequestHandler {
  const handler = handlers.get(app);
  if (!handler) throw new Error('requestHandler: the app was not made by createHttpApp');
  return handler;
}

/** Puts `first` (and the front door) ahead of Express as the server's one `request` listener. */
function serveFirst(
  app: NestExpressApplication,
  first: readonly (RawHandler | undefined)[],
  readBody: RawHandler,
  door: FrontDoor | undefined,
  logger: pino.Logger,
): void {
  const server: Server = app.getHttpServer();
  const framework = app.getHttpAdapter().getInstance() as RequestHandler;
  if (server.listeners('request').length !== 1)
    throw new Error('the HTTP server has more than one request listener: the front door cannot take its place');
  server.removeAllListeners('request');
  const plain = first.filter((h): h is RawHandler => !!h);
  const taken = door ? [...plain, readBody, ...door.handlers] : plain;
  const handle: RequestHandler = (req, res, done) => {
    const steps = door?.takes(req) ? taken : plain; // a pure look at method, path and headers
    let i = 0;
    const next = (): void => {
      const step = steps[i++];
      if (!step) return framework(req, res, done && restoring(req, res, done));
      try {
        step(req, res, next);
      } catch (err) {
        if (res.headersSent) res.destroy();
        else sendError(res, err, res.getHeader('x-request-id'), logger);
      }
    };
    next();
  };
  handlers.set(app, handle);
  server.on('request', (req: IncomingMessage, res: ServerResponse) => handle(req, res));
}

/**
 * `done` of a handler mounted in another Express app, with the request and response given back with the prototypes
 * they came with (Express does the same for a mounted sub-app): Nest's Express app sets its own on the way in.
 */
function restoring(req: IncomingMessage, res: ServerResponse, done: (err?: unknown) => void) {
  const [reqProto, resProto] = [Object.getPrototypeOf(req) as object, Object.getPrototypeOf(res) as object];
  return (err?: unknown): void => {
    Object.setPrototypeOf(req, reqProto);
    Object.setPrototypeOf(res, resProto);
    done(err);
  };
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
