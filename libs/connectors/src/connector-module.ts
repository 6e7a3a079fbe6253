import type { DynamicModule, Provider, Type } from '@nestjs/common';
import {
  ActivityModule,
  ActivityPublisher,
  type ActivityPublisherConfig,
  type MetricsConfig,
  StoaMetrics,
  TelemetryModule,
  type TracingConfig,
} from '@stoa/activity';
import { AuthModule, type AuthModuleOptions } from '@stoa/auth';
import { LoggingModule } from '@stoa/core';
import { ConnectorMcpController, ConnectorMcpService } from './connector-mcp';
import { createUpstreamPool } from './pool-factory';
import { PoolLifecycle } from './pool-lifecycle.service';
import { UpstreamPool } from './upstream-pool';
import type { PoolConfig, UpstreamConfig } from './upstream.config';

/** The keys every connector config has. */
interface ConnectorConfig {
  name: string;
  auth: AuthModuleOptions['auth'];
  activity: ActivityPublisherConfig;
  metrics: MetricsConfig;
  tracing: TracingConfig;
  server: { public_url?: string; port: number };
  connectors: PoolConfig;
}

/** What a connector app (router, gateway, dispatcher) adds to the parts every connector has. */
export interface ConnectorModuleSpec {
  /** `router`, `gateway`, `dispatcher`: names the logger (`stoa-router`) and the admin token file. */
  app: string;
  config: ConnectorConfig;
  /** The app's settings provider (`{ provide: ROUTER_SETTINGS, useValue: s }`). */
  settings: Provider;
  upstreams: readonly UpstreamConfig[];
  /** Pool settings when not `config.connectors` as written. */
  pool?: PoolConfig;
  /** Where a no-op server writes its admin token; default `data/{app}-{port}.admin-token`. */
  adminTokenFile?: string;
  /** The app's MCP surface; `/mcp` serves it. */
  mcp: Type<ConnectorMcpService>;
  imports?: DynamicModule[];
  controllers?: Type[];
  providers?: Provider[];
}

/**
 * The module of a connector app: logging, auth, activity events, metrics (`/metrics`: tool calls, upstream
 * health and hops), the upstream pool (connected at start, closed on shutdown) and `/mcp` over the app's
 * surface, plus the app's own imports, controllers and providers.
 */
export function connectorModule(module: Type, spec: ConnectorModuleSpec): DynamicModule {
  const { auth, server, connectors, name } = spec.config;
  return {
    module,
    imports: [
      LoggingModule.forRoot(`stoa-${spec.app}`),
      ActivityModule.forRoot(spec.config.activity, name),
      TelemetryModule.forRoot(spec.config, { app: spec.app, server: name }),
      AuthModule.forRoot({
        auth,
        publicBaseUrl: server.public_url,
        adminTokenFile: spec.adminTokenFile ?? `data/${spec.app}-${server.port}.admin-token`,
      }),
      ...(spec.imports ?? []),
    ],
    controllers: [ConnectorMcpController, ...(spec.controllers ?? [])],
    providers: [
      spec.settings,
      {
        provide: UpstreamPool,
        inject: [StoaMetrics, ActivityPublisher],
        useFactory: async (metrics: StoaMetrics, activity: ActivityPublisher) => {
          const pool = await createUpstreamPool(spec.upstreams, spec.pool ?? connectors, auth);
          pool.metrics = metrics;
          pool.activity = activity;
          metrics.addCollector(() => {
            for (const u of pool.status())
              metrics.upstreamHealthy.set({ upstream: u.name }, u.state === 'healthy' ? 1 : 0);
          });
          return pool;
        },
      },
      PoolLifecycle,
      spec.mcp,
      { provide: ConnectorMcpService, useExisting: spec.mcp },
      ...(spec.providers ?? []),
    ],
  };
}
