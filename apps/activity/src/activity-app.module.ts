import { join, resolve } from 'node:path';
import { type DynamicModule, Module } from '@nestjs/common';
import { ACTIVITY_MIGRATIONS, ActivityFeedModule, TelemetryModule } from '@stoa/activity';
import { AuthModule } from '@stoa/auth';
import { LoggingModule } from '@stoa/core';
import { PersistenceModule } from '@stoa/persistence';
import type { ActivityConfig } from './activity.config';
import { ActivityAuth } from './activity-auth';
import { ACTIVITY_CONFIG } from './activity.tokens';
import { DashboardController } from './dashboard.controller';
import { EventsController } from './events.controller';
import { StreamController } from './stream.controller';

/** The activity dashboard: ingest from Stoa apps, the store, the live stream and the page. */
@Module({})
export class ActivityAppModule {
  static forRoot(c: ActivityConfig): DynamicModule {
    const dataDir = resolve(c.data_dir);
    return {
      module: ActivityAppModule,
      imports: [
        LoggingModule.forRoot('stoa-activity'),
        AuthModule.forRoot({
          auth: c.auth,
          publicBaseUrl: c.server.public_url,
          adminTokenFile: join(dataDir, `activity-${c.server.port}.admin-token`),
        }),
        TelemetryModule.forRoot(c, { app: 'activity', server: c.name }),
        PersistenceModule.forRoot({
          database: c.database,
          defaultSqlitePath: join(dataDir, 'activity.sqlite'),
          migrations: [...ACTIVITY_MIGRATIONS],
        }),
        ActivityFeedModule.forRoot({
          retentionMs: c.retention_hours * 3_600_000,
          sweepIntervalMs: c.sweep_interval_seconds * 1000,
          redisUrl: c.redis_url,
          channel: `stoa:activity:${c.name}:events`,
        }),
      ],
      controllers: [EventsController, StreamController, DashboardController],
      providers: [{ provide: ACTIVITY_CONFIG, useValue: c }, ActivityAuth],
    };
  }
}
