import { Injectable, type OnApplicationShutdown, type Provider } from '@nestjs/common';
import { createUpstreamPool, UpstreamPool } from '@stoa/connectors';
import type { RouterSettings } from './router.config';
import { ROUTER_SETTINGS } from './router.tokens';

/** Closes the pool's connections and timers on shutdown. */
@Injectable()
export class PoolLifecycle implements OnApplicationShutdown {
  constructor(private readonly pool: UpstreamPool) {}

  async onApplicationShutdown(): Promise<void> {
    await this.pool.close();
  }
}

/** The upstream pool, connected before the app serves. */
export const poolProvider: Provider = {
  provide: UpstreamPool,
  inject: [ROUTER_SETTINGS],
  useFactory: (s: RouterSettings): Promise<UpstreamPool> => createUpstreamPool(s.config.upstreams, s.config.connectors, s.config.auth),
};
