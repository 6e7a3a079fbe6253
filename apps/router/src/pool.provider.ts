import { Injectable, Logger, type OnApplicationShutdown, type Provider } from '@nestjs/common';
import { entraSettings } from '@stoa/auth';
import type { Principal } from '@stoa/core';
import { UpstreamCredentials, UpstreamPool } from '@stoa/connectors';
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

/**
 * The upstream pool, connected before the app serves: every upstream is tried once, concurrently; failures
 * are isolated (the upstream shows as unavailable and keeps being retried in the background).
 */
export const poolProvider: Provider = {
  provide: UpstreamPool,
  inject: [ROUTER_SETTINGS],
  useFactory: async (s: RouterSettings): Promise<UpstreamPool> => {
    const c = s.config;
    const noop = c.auth.mode === 'noop';
    const ours = noop ? [] : entraSettings(c.auth).audiences;
    const logger = new Logger('Upstreams');
    const pool = new UpstreamPool(c.upstreams, c.connectors, (u) => {
      // No-op (development) auth has no audience of its own: passthrough then forwards the unverified dev token.
      const own = noop && u.auth.mode === 'passthrough' ? [u.auth.audience] : ours;
      const credentials = new UpstreamCredentials(u.name, u.auth, { ownAudiences: own });
      credentials.assertUsable();
      if (!noop || u.auth.mode !== 'passthrough') return credentials;
      // Development: a caller without a token is the dev user here and upstream alike.
      return { authorization: (p: Principal) => (p.token ? credentials.authorization(p) : Promise.resolve(undefined)) };
    });
    await pool.start();
    for (const st of pool.status()) logger.log({ upstream: st.name, state: st.state, server: st.server_name, tools: st.tools, err: st.last_error ?? undefined }, 'upstream');
    return pool;
  },
};
