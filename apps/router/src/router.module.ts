import { type DynamicModule, Module } from '@nestjs/common';
import { connectorModule } from '@stoa/connectors';
import { AdminUpstreamsController } from './admin.controller';
import { CatalogController } from './catalog.controller';
import { HealthController } from './health.controller';
import type { RouterSettings } from './router.config';
import { RouterMcpService } from './router-mcp.service';
import { ROUTER_SETTINGS } from './router.tokens';

/** The router: one MCP endpoint over several upstream servers (reference RouterServer, §8.3). */
@Module({})
export class RouterModule {
  static forRoot(s: RouterSettings): DynamicModule {
    const c = s.config;
    return connectorModule(RouterModule, {
      app: 'router',
      config: c,
      settings: { provide: ROUTER_SETTINGS, useValue: s },
      upstreams: c.upstreams,
      mcp: RouterMcpService,
      controllers: [HealthController, CatalogController, AdminUpstreamsController],
    });
  }
}
