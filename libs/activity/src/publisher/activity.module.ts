import { type DynamicModule, Logger, Module } from '@nestjs/common';
import { ActivityPublisher } from './activity-publisher';
import type { ActivityPublisherConfig } from './publisher.config';

/** Global `ActivityPublisher` for an app; events go nowhere unless `activity.url` (ACTIVITY_UI_URL) is set. */
@Module({})
export class ActivityModule {
  static forRoot(config: ActivityPublisherConfig, server: string): DynamicModule {
    return {
      module: ActivityModule,
      global: true,
      providers: [
        {
          provide: ActivityPublisher,
          useFactory: () => {
            const publisher = new ActivityPublisher(config, server);
            if (publisher.enabled)
              new Logger('Activity').log({ url: config.url, auth: authKind(config) }, 'activity events enabled');
            return publisher;
          },
        },
      ],
      exports: [ActivityPublisher],
    };
  }
}

function authKind(c: ActivityPublisherConfig): string {
  if (c.audience) return 'entra';
  return c.secret ? 'shared-secret' : 'none';
}
