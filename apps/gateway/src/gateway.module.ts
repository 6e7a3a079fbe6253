import { join, resolve } from 'node:path';
import { type DynamicModule, Module } from '@nestjs/common';
import { StoaMetrics } from '@stoa/activity';
import { AuditModule, AUDIT_MIGRATIONS } from '@stoa/audit';
import { connectorModule } from '@stoa/connectors';
import { PersistenceModule } from '@stoa/persistence';
import { AdminController } from './admin.controller';
import { HealthController } from './health.controller';
import type { GatewaySettings } from './gateway.config';
import { GatewayMcpService } from './gateway-mcp.service';
import { GATEWAY_SETTINGS } from './gateway.tokens';
import { Guardrails } from './guardrails.service';
import { RateLimits } from './rate-limits.service';

/** The gateway: one upstream behind policy, shared rate limits and an audit log (reference GatewayServer, §8.4). */
@Module({})
export class GatewayModule {
  static forRoot(s: GatewaySettings): DynamicModule {
    const c = s.config;
    const dataDir = resolve(c.data_dir);
    return connectorModule(GatewayModule, {
      app: 'gateway',
      config: c,
      settings: { provide: GATEWAY_SETTINGS, useValue: s },
      adminTokenFile: join(dataDir, `gateway-${c.server.port}.admin-token`),
      upstreams: [c.upstream],
      mcp: GatewayMcpService,
      imports: [
        PersistenceModule.forRoot({
          database: c.database,
          defaultSqlitePath: join(dataDir, 'gateway.sqlite'),
          migrations: [...AUDIT_MIGRATIONS],
        }),
        AuditModule.forRoot(c.audit),
      ],
      controllers: [HealthController, AdminController],
      providers: [
        {
          provide: RateLimits,
          inject: [StoaMetrics],
          useFactory: (metrics: StoaMetrics) =>
            new RateLimits(c.policy, c.redis_url, `stoa:gateway:${c.name}:rl`, metrics),
        },
        Guardrails,
      ],
    });
  }
}
