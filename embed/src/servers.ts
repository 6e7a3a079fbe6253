import 'reflect-metadata';
import { dirname, resolve } from 'node:path';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type pino from 'pino';
import type { z } from 'zod';
import { refuseOpenNoopBind, requestHandler, type RequestHandler, type ServerApp } from '@stoa/auth';
import { readYaml, type ConfigDocument } from '@stoa/config';
import { StartupRefusedError, startupLogger } from '@stoa/core';
import { createDispatcherApp, loadDispatcherSettings, type dispatcherConfigSchema } from '../../apps/dispatcher/src';
import {
  createExecutorApp,
  loadExecutorSettings,
  type ExecutorExtensions,
  type executorConfigSchema,
} from '../../apps/executor/src';
import { createGatewayApp, loadGatewaySettings, type gatewayConfigSchema } from '../../apps/gateway/src';
import { createRouterApp, loadRouterSettings, type routerConfigSchema } from '../../apps/router/src';
import { createSquareApp, loadSquareSettings, type squareConfigSchema } from '../../apps/square/src';

/** An executor config object: exactly what a server.yaml holds (snake_case keys, defaults filled in by Stoa). */
export type ExecutorConfigInput = z.input<typeof executorConfigSchema>;
/** A router config object: what a router YAML holds. */
export type RouterConfigInput = z.input<typeof routerConfigSchema>;
/** A gateway config object: what a gateway YAML holds. */
export type GatewayConfigInput = z.input<typeof gatewayConfigSchema>;
/** A dispatcher config object: what a dispatcher YAML holds. */
export type DispatcherConfigInput = z.input<typeof dispatcherConfigSchema>;
/** A coordination square config object: what a square YAML holds. */
export type SquareConfigInput = z.input<typeof squareConfigSchema>;

/** A config read from a YAML file by {@link loadConfig}: the document and the directory its relative paths resolve against. */
export interface ConfigFile<T = Record<string, unknown>> {
  readonly document: T;
  readonly baseDir: string;
}

/** A config given to a `create*` function: an object (relative paths against the working directory) or a loaded file. */
export type ConfigInput<T> = T | ConfigFile<T>;

/** Options every `create*` function takes. */
export interface CreateOptions {
  /** Variables that override the config as they do for the CLI (PORT, DATABASE_URL, …); default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** The pino logger the app and its access log write to; default JSON lines on stdout. */
  logger?: pino.Logger;
}

/** A Stoa server built in code: listen on a port, or mount it into your own Express or Nest app. */
export interface StoaServer {
  /** The Nest application (initialised): `app.get(…)` reaches its providers. */
  readonly app: NestExpressApplication;
  /**
   * The request handler, for `yourExpress.use('/stoa', server.handler)` (MCP at `/stoa/mcp`) or
   * `http.createServer(server.handler)`: the access log, Host checks and hot paths, then the Nest app. A mounted
   * executor builds download links from `server.public_url` or the `publicUrl` extension.
   */
  readonly handler: RequestHandler;
  /**
   * Listens on `port` (default `server.port`; 0 picks a free one) and resolves with the base URL (MCP at
   * `{url}/mcp`). `host` must be the configured `server.host`: Host checks and the no-op auth bind refusal are
   * set up for that address when the server is built.
   */
  listen: (port?: number, host?: string) => Promise<string>;
  /** Stops the server and everything it started (kernels, sidecars, upstream connections). */
  close: () => Promise<void>;
}

/** Reads a YAML config file for a `create*` function (its relative paths keep resolving against the file's directory). */
export function loadConfig<T = Record<string, unknown>>(path: string): ConfigFile<T> {
  return Object.freeze({ document: readYaml(path) as T, baseDir: dirname(resolve(path)) });
}

/** Builds an executor with its extension points (search backend, publishers, hooks, identity, artifacts, public URL). */
export function createExecutor(
  config: ConfigInput<ExecutorConfigInput>,
  extensions: ExecutorExtensions = {},
  options: CreateOptions = {},
): Promise<StoaServer> {
  const logger = options.logger ?? startupLogger('stoa-executor', 'buffered');
  const settings = loadExecutorSettings(source(config), {}, options.env ?? process.env, (m) => logger.warn(m));
  return start('executor', settings, { ...options, logger }, (s, log) => createExecutorApp(s, log, extensions));
}

/** Builds a router over the upstreams of `config` (executors, other routers, plain MCP servers). */
export function createRouter(config: ConfigInput<RouterConfigInput>, options: CreateOptions = {}): Promise<StoaServer> {
  const settings = loadRouterSettings(source(config), {}, options.env ?? process.env);
  return start('router', settings, options, createRouterApp);
}

/** Builds a gateway (tool policy, rate limits, audit) in front of one upstream. */
export function createGateway(
  config: ConfigInput<GatewayConfigInput>,
  options: CreateOptions = {},
): Promise<StoaServer> {
  const settings = loadGatewaySettings(source(config), {}, options.env ?? process.env);
  return start('gateway', settings, options, createGatewayApp);
}

/** Builds a dispatcher over replicas of one executor. */
export function createDispatcher(
  config: ConfigInput<DispatcherConfigInput>,
  options: CreateOptions = {},
): Promise<StoaServer> {
  const settings = loadDispatcherSettings(source(config), {}, options.env ?? process.env);
  return start('dispatcher', settings, options, createDispatcherApp);
}

/** Builds a coordination square (registry, chat channels, board, locks) served over HTTP. */
export function createSquare(config: ConfigInput<SquareConfigInput>, options: CreateOptions = {}): Promise<StoaServer> {
  const settings = loadSquareSettings(source(config), {}, options.env ?? process.env);
  return start('square', settings, options, createSquareApp);
}

type BindConfig = Parameters<typeof refuseOpenNoopBind>[0];

/** The start-up every app shares: the no-op bind refusal, the logger, the app built and initialised. */
async function start<S extends { config: BindConfig }>(
  app: string,
  settings: S,
  options: CreateOptions,
  build: (settings: S, logger: pino.Logger) => Promise<ServerApp>,
): Promise<StoaServer> {
  refuseOpenNoopBind(settings.config);
  const logger = options.logger ?? startupLogger(`stoa-${app}`, 'buffered');
  return embedded(await build(settings, logger), settings.config.server.host);
}

function source<T>(config: ConfigInput<T>): ConfigDocument {
  return isConfigFile(config) ? (config as ConfigDocument) : { document: config as Record<string, unknown> };
}

function isConfigFile<T>(config: ConfigInput<T>): config is ConfigFile<T> {
  return typeof config === 'object' && config !== null && 'document' in config && 'baseDir' in config;
}

async function embedded(built: ServerApp, configuredHost: string): Promise<StoaServer> {
  await built.app.init(); // a mounted handler serves without listen()
  return {
    app: built.app,
    handler: requestHandler(built.app),
    listen: (port, host) => {
      if (host !== undefined && host !== configuredHost)
        throw new StartupRefusedError(
          `listen(…, '${host}') differs from server.host '${configuredHost}': set server: { host: '${host}' } in the config instead, so Host checks and the auth bind rules cover that address.`,
        );
      return built.listen(port);
    },
    close: () => built.close(),
  };
}
