import { join, resolve } from 'node:path';
import { type DynamicModule, Module } from '@nestjs/common';
import { AuditModule, AUDIT_MIGRATIONS } from '@stoa/audit';
import { AuthModule } from '@stoa/auth';
import { LoggingModule } from '@stoa/core';
import { createUpstreamPool, PoolLifecycle, UpstreamPool } from '@stoa/connectors';
import { PersistenceModule } from '@stoa/persistence';
import { AdminController, HealthController, McpController } from './controllers';
import type { GatewaySettings } from './gateway.config';
import { GatewayMcpService } from './gateway-mcp.service';
import { GATEWAY_SETTINGS } from './gateway.tokens';
import { Guardrails } from './guardrails';
import { RateLimits } from './rate-limits';

/** The gateway: one upstream behind policy, shared rate limits and an audit log (reference GatewayServer, §8.4). */
@Module({})
export class GatewayModule {
  static forRoot(s: GatewaySettings): DynamicModule {
    const c = s.config;
    return {
      module: GatewayModule,
      imports: [
        LoggingModule.forRoot('stoa-gateway'),
        AuthModule.forRoot({
          auth: c.auth,
          publicBaseUrl: c.server.public_url,
          adminTokenFile: join(resolve(c.data_dir), `gateway-${c.server.port}.admin-token`),
        }),
        PersistenceModule.forRoot({
          database: c.database,
          defaultSqlitePath: join(resolve(c.data_dir), 'gateway.sqlite'),
          migrations: [...AUDIT_MIGRATIONS],
        }),
        AuditModule.forRoot(c.audit),
      ],
      controllers: [HealthController, McpController, AdminController],
      providers: [
        { provide: GATEWAY_SETTINGS, useValue: s },
        { provide: UpstreamPool, useFactory: () => createUpstreamPool([c.upstream], c.connectors, c.auth) },
        { provide: RateLimits, useFactory: () => new RateLimits(c.policy, c.redis_url, `stoa:gateway:${c.name}:rl`) },
        PoolLifecycle,
        Guardrails,
        GatewayMcpService,
      ],
    };
  }
}
