import { type DynamicModule, Module } from '@nestjs/common';
import { AuthModule } from '@stoa/auth';
import { LoggingModule } from '@stoa/core';
import { createUpstreamPool, PoolLifecycle, UpstreamPool } from '@stoa/connectors';
import { AdminUpstreamsController } from './admin.controller';
import { CatalogController } from './catalog.controller';
import { HealthController } from './health.controller';
import { McpController } from './mcp.controller';
import type { RouterSettings } from './router.config';
import { RouterMcpService } from './router-mcp.service';
import { ROUTER_SETTINGS } from './router.tokens';

/** The router: one MCP endpoint over several upstream servers (reference RouterServer, §8.3). */
@Module({})
export class RouterModule {
  static forRoot(s: RouterSettings): DynamicModule {
    return {
      module: RouterModule,
      imports: [
        LoggingModule.forRoot('stoa-router'),
        AuthModule.forRoot({
          auth: s.config.auth,
          publicBaseUrl: s.config.server.public_url,
          adminTokenFile: `data/router-${s.config.server.port}.admin-token`,
        }),
      ],
      controllers: [HealthController, McpController, CatalogController, AdminUpstreamsController],
      providers: [
        { provide: ROUTER_SETTINGS, useValue: s },
        {
          provide: UpstreamPool,
          useFactory: () => createUpstreamPool(s.config.upstreams, s.config.connectors, s.config.auth),
        },
        PoolLifecycle,
        RouterMcpService,
      ],
    };
  }
}
