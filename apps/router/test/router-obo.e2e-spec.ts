import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startExecutor, type RunningExecutor } from '../../../test/support/executor-process';
import { TestOidcIssuer } from '../../../test/support/oidc-issuer';
import { startRouter, type RunningRouter } from '../../../test/support/router-process';
import { v2Client } from '../../../test/support/ts-clients';

/**
 * Entra end to end with a real local HTTPS issuer: the caller's token is for the router; the router exchanges
 * it on behalf of the caller (jwt-bearer OBO grant, via MSAL) for a token whose audience is the upstream's.
 */
describe('router with Entra auth and on-behalf-of upstream credentials', () => {
  let idp: TestOidcIssuer;
  let executor: RunningExecutor;
  let router: RunningRouter;
  const upstreamApp = 'demo-executor-app';

  beforeAll(async () => {
    idp = await TestOidcIssuer.start();
    idp.registerClient(idp.clientId, 'router-secret');
    const trust = { NODE_EXTRA_CA_CERTS: idp.caFile };
    executor = await startExecutor({
      config: {
        auth: { tenant_id: idp.tenant, client_id: upstreamApp, authority: idp.authority },
        sessions: { warm_pool: 1 },
      },
      env: trust,
    });
    router = await startRouter(
      {
        auth: { tenant_id: idp.tenant, client_id: idp.clientId, authority: idp.authority },
        upstreams: [
          {
            name: 'demo',
            url: executor.url,
            auth: {
              mode: 'obo',
              audience: `api://${upstreamApp}`,
              tenant_id: idp.tenant,
              client_id: idp.clientId,
              client_secret_env: 'ROUTER_UPSTREAM_SECRET',
              authority: idp.authority,
            },
          },
        ],
      },
      { ...trust, ROUTER_UPSTREAM_SECRET: 'router-secret' },
    );
  });
  afterAll(async () => {
    await router?.stop();
    await executor?.stop();
    await idp?.close();
  });

  it("reaches the upstream with a token for the upstream's audience, as the calling user", async () => {
    const user = await idp.token({ oid: 'alice', scp: 'access_as_user' });
    const c = await v2Client(router.mcpUrl, 'auto', user);
    try {
      const r = await c.call('execute_demo_code', { code: "import os\nos.environ['USER_IDENTITY']" });
      expect(r.json).toMatchObject({ success: true, stdout: `'alice@${idp.tenant}'\n` });
      const before = idp.tokenRequests.on_behalf_of;
      expect(before).toBeGreaterThanOrEqual(1);
      await c.call('demo_list_sessions', {});
      expect(idp.tokenRequests.on_behalf_of).toBe(before); // cached per user and audience
    } finally {
      await c.close();
    }
    // The caller's own token is not accepted by the upstream (different audience): passthrough would have failed.
    const direct = await fetch(executor.mcpUrl, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${user}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: '{}',
    });
    expect(direct.status).toBe(401);
  });

  it('refuses an app-only caller for OBO with a clear tool error', async () => {
    const app = await idp.token({ oid: 'svc', roles: ['Worker'] });
    const c = await v2Client(router.mcpUrl, 'auto', app);
    try {
      const r = await c.call('demo_list_sessions', {});
      expect(r.isError).toBe(true);
      expect(r.text).toMatch(/on-behalf-of|OBO|user/i);
    } finally {
      await c.close();
    }
  });
});
