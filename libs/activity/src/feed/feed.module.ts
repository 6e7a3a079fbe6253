import { type DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { EventHub } from './event-hub';
import { EventStore, FEED_SETTINGS } from './event-store';
import { ActivityEventEntity, ActivityFigureEntity } from './feed.entities';
import type { FeedSettings } from './feed.types';

/** The activity app's event store and live hub; needs PersistenceModule with ACTIVITY_MIGRATIONS. */
@Module({})
export class ActivityFeedModule {
  static forRoot(settings: FeedSettings): DynamicModule {
    return {
      module: ActivityFeedModule,
      global: true,
      imports: [TypeOrmModule.forFeature([ActivityEventEntity, ActivityFigureEntity])],
      providers: [{ provide: FEED_SETTINGS, useValue: settings }, EventStore, EventHub],
      exports: [EventStore, EventHub],
    };
  }
}
