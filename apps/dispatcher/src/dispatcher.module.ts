import { type DynamicModule, Module } from '@nestjs/common';
import { connectorModule } from '@stoa/connectors';
import { AdminWorkersController } from './admin.controller';
import { HealthController } from './health.controller';
import type { DispatcherSettings } from './dispatcher.config';
import { DispatcherMcpService } from './dispatcher-mcp.service';
import { DISPATCHER_SETTINGS } from './dispatcher.tokens';
import { DispatchService } from './dispatch.service';
import { TransferProxyController } from './transfer/transfer-proxy.controller';

/** The dispatcher: identical workers behind one endpoint (reference DispatcherServer, §8.5). */
@Module({})
export class DispatcherModule {
  static forRoot(s: DispatcherSettings): DynamicModule {
    const c = s.config;
    return connectorModule(DispatcherModule, {
      app: 'dispatcher',
      config: c,
      settings: { provide: DISPATCHER_SETTINGS, useValue: s },
      upstreams: c.workers.map((w) => ({
        name: w.name,
        url: w.url,
        expose_tools: null,
        tool_aliases: {},
        auth: c.worker_auth,
      })),
      pool: { ...c.connectors, health_interval_seconds: Math.max(1, Math.round(c.health_check_interval)) },
      mcp: DispatcherMcpService,
      controllers: [HealthController, AdminWorkersController, TransferProxyController],
      providers: [DispatchService],
    });
  }
}
