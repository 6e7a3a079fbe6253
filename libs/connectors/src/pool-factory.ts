import { Logger } from '@nestjs/common';
import type { AuthConfig } from '@stoa/auth';
import { connectorIdentity, UpstreamCredentials } from './credentials';
import { UpstreamPool } from './upstream-pool';
import type { PoolConfig, UpstreamConfig } from './upstream.config';

/**
 * A connected upstream pool for a connector app: every upstream tried once, concurrently (failures isolated and
 * retried in the background), credentials checked at start (passthrough only to our own audience, no shared
 * upstream identity beside Entra auth unless acknowledged).
 */
export async function createUpstreamPool(
  upstreams: readonly UpstreamConfig[],
  pool: PoolConfig,
  auth: AuthConfig,
): Promise<UpstreamPool> {
  const connector = connectorIdentity(auth);
  const logger = new Logger('Upstreams');
  const created = new UpstreamPool(upstreams, pool, (u) => {
    const credentials = new UpstreamCredentials(u.name, u.auth, { connector });
    credentials.assertUsable();
    return credentials;
  });
  await created.start();
  for (const st of created.status())
    logger.log(
      { upstream: st.name, state: st.state, server: st.server_name, tools: st.tools, err: st.last_error ?? undefined },
      'upstream',
    );
  return created;
}
