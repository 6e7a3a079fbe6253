import { type DynamicModule, Module } from '@nestjs/common';
import { AuthModule } from '@stoa/auth';
import { LoggingModule } from '@stoa/core';
import { createUpstreamPool, PoolLifecycle, UpstreamPool } from '@stoa/connectors';
import { AdminWorkersController, HealthController, McpController } from './controllers';
import type { DispatcherSettings } from './dispatcher.config';
import { DispatcherMcpService } from './dispatcher-mcp.service';
import { DISPATCHER_SETTINGS } from './dispatcher.tokens';
import { DispatchService } from './dispatch.service';

/** The dispatcher: identical workers behind one endpoint (reference DispatcherServer, §8.5). */
@Module({})
export class DispatcherModule {
  static forRoot(s: DispatcherSettings): DynamicModule {
    const c = s.config;
    const upstreams = c.workers.map((w) => ({
      name: w.name,
      url: w.url,
      expose_tools: null,
      tool_aliases: {},
      auth: c.worker_auth,
    }));
    const poolConfig = { ...c.connectors, health_interval_seconds: Math.max(1, Math.round(c.health_check_interval)) };
    return {
      module: DispatcherModule,
      imports: [
        LoggingModule.forRoot('stoa-dispatcher'),
        AuthModule.forRoot({
          auth: c.auth,
          publicBaseUrl: c.server.public_url,
          adminTokenFile: `data/dispatcher-${c.server.port}.admin-token`,
        }),
      ],
      controllers: [HealthController, McpController, AdminWorkersController],
      providers: [
        { provide: DISPATCHER_SETTINGS, useValue: s },
        { provide: UpstreamPool, useFactory: () => createUpstreamPool(upstreams, poolConfig, c.auth) },
        PoolLifecycle,
        DispatchService,
        DispatcherMcpService,
      ],
    };
  }
}
