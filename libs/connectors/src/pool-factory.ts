import { Logger } from '@nestjs/common';
import { entraSettings, type AuthConfig } from '@stoa/auth';
import type { Principal } from '@stoa/core';
import { UpstreamCredentials } from './credentials';
import { UpstreamPool } from './upstream-pool';
import type { CredentialSource, PoolConfig, UpstreamConfig } from './upstream.config';

/**
 * A connected upstream pool for a connector app: every upstream tried once, concurrently (failures isolated and
 * retried in the background), credentials checked at start (passthrough only to our own audience).
 */
export async function createUpstreamPool(upstreams: readonly UpstreamConfig[], pool: PoolConfig, auth: AuthConfig): Promise<UpstreamPool> {
  const noop = auth.mode === 'noop';
  const ours = noop ? [] : entraSettings(auth).audiences;
  const logger = new Logger('Upstreams');
  const created = new UpstreamPool(upstreams, pool, (u): CredentialSource => {
    // No-op (development) auth has no audience of its own: passthrough then forwards the unverified dev token.
    const own = noop && u.auth.mode === 'passthrough' ? [u.auth.audience] : ours;
    const credentials = new UpstreamCredentials(u.name, u.auth, { ownAudiences: own });
    credentials.assertUsable();
    if (!noop || u.auth.mode !== 'passthrough') return credentials;
    // Development: a caller without a token is the dev user here and upstream alike.
    return { authorization: (p: Principal) => (p.token ? credentials.authorization(p) : Promise.resolve(undefined)) };
  });
  await created.start();
  for (const st of created.status()) logger.log({ upstream: st.name, state: st.state, server: st.server_name, tools: st.tools, err: st.last_error ?? undefined }, 'upstream');
  return created;
}
