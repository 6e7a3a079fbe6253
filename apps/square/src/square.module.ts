import { join } from 'node:path';
import { type DynamicModule, Module } from '@nestjs/common';
import { AuditModule, AUDIT_MIGRATIONS } from '@stoa/audit';
import { AuthModule } from '@stoa/auth';
import { COORDINATION_MIGRATIONS, CoordinationModule } from '@stoa/coordination';
import { LoggingModule } from '@stoa/core';
import { PersistenceModule } from '@stoa/persistence';
import { AdminController } from './admin.controller';
import { HealthController } from './health.controller';
import { LiveController } from './live/live.controller';
import { LiveFeed } from './live/live-feed.service';
import { McpController } from './mcp.controller';
import type { SquareSettings } from './square.config';
import { SquareMcpService } from './square-mcp.service';
import { SQUARE_SETTINGS } from './square.tokens';

/** The coordination square: registry, chat, board, locks and signals over MCP, with an admin API. */
@Module({})
export class SquareModule {
  static forRoot(s: SquareSettings, opts: { http: boolean } = { http: true }): DynamicModule {
    const c = s.config;
    return {
      module: SquareModule,
      imports: [
        LoggingModule.forRoot('stoa-square'),
        AuthModule.forRoot({
          auth: c.auth,
          publicBaseUrl: c.server.public_url,
          adminTokenFile: join(s.dataDir, `square-${c.server.port}.admin-token`),
        }),
        PersistenceModule.forRoot({
          database: c.database,
          defaultSqlitePath: join(s.dataDir, 'square.sqlite'),
          migrations: [...COORDINATION_MIGRATIONS, ...AUDIT_MIGRATIONS],
        }),
        AuditModule.forRoot(c.audit),
        CoordinationModule.forRoot(s.coordination),
      ],
      controllers: opts.http ? [HealthController, McpController, AdminController, LiveController] : [],
      providers: [{ provide: SQUARE_SETTINGS, useValue: s }, SquareMcpService, ...(opts.http ? [LiveFeed] : [])],
    };
  }
}
