import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startExecutor, type RunningExecutor } from '../../../test/support/executor-process';
import { TestOidcIssuer } from '../../../test/support/oidc-issuer';
import { v2Client } from '../../../test/support/ts-clients';

/**
 * Peer credentials follow the connectors' upstream modes, against a real local HTTPS issuer: alpha exchanges
 * the caller's token on behalf of the caller (OBO) for one whose audience is beta's, so the object lands in
 * the same user's session on beta; passthrough to another audience is refused at start.
 */
describe('object transfer between Entra-protected executors', () => {
  let idp: TestOidcIssuer;
  let alpha: RunningExecutor;
  let beta: RunningExecutor;
  const betaApp = 'beta-executor-app';
  const trust = () => ({ NODE_EXTRA_CA_CERTS: idp.caFile, PEER_SECRET: 'alpha-secret' });

  beforeAll(async () => {
    idp = await TestOidcIssuer.start();
    idp.registerClient(idp.clientId, 'alpha-secret');
    beta = await startExecutor({
      config: {
        name: 'beta',
        auth: { tenant_id: idp.tenant, client_id: betaApp, authority: idp.authority },
        sessions: { warm_pool: 1 },
      },
      env: trust(),
    });
    const obo = {
      mode: 'obo',
      audience: `api://${betaApp}`,
      tenant_id: idp.tenant,
      client_id: idp.clientId,
      client_secret_env: 'PEER_SECRET',
      authority: idp.authority,
    };
    alpha = await startExecutor({
      config: {
        name: 'alpha',
        auth: { tenant_id: idp.tenant, client_id: idp.clientId, authority: idp.authority },
        sessions: { warm_pool: 1 },
        peers: { beta: { url: beta.url, auth: obo } },
      },
      env: trust(),
    });
  });
  afterAll(async () => {
    await alpha?.stop();
    await beta?.stop();
    await idp?.close();
  });

  it('sends as the calling user with an on-behalf-of token for the peer', async () => {
    const atBeta = await v2Client(
      beta.mcpUrl,
      'auto',
      await idp.token({ oid: 'alice', scp: 'access_as_user', aud: betaApp }),
    );
    const atAlpha = await v2Client(alpha.mcpUrl, 'auto', await idp.token({ oid: 'alice', scp: 'access_as_user' }));
    try {
      const there = (await atBeta.call('execute_beta_code', { code: 'pass' })).json;
      const here = (await atAlpha.call('execute_alpha_code', { code: "payload = {'from': 'alpha'}" })).json;
      const before = idp.tokenRequests.on_behalf_of;
      const sent = (
        await atAlpha.call('alpha_send', { data_ref: 'payload', to: 'beta', execution_session_id: here.session_id })
      ).json;
      expect(sent).toMatchObject({ success: true, destination: 'beta' });
      expect(idp.tokenRequests.on_behalf_of).toBe(before + 1);
      expect(
        (await atBeta.call('execute_beta_code', { code: 'payload', execution_session_id: there.session_id })).json
          .stdout,
      ).toBe("{'from': 'alpha'}\n");
    } finally {
      await atBeta.close();
      await atAlpha.close();
    }
  });

  it("refuses to start with passthrough to a peer that is not this server's own audience", async () => {
    const passthrough = { mode: 'passthrough', audience: `api://${betaApp}` };
    await expect(
      startExecutor({
        config: {
          name: 'gamma',
          auth: { tenant_id: idp.tenant, client_id: idp.clientId, authority: idp.authority },
          peers: { beta: { url: beta.url, auth: passthrough } },
        },
        env: trust(),
      }),
    ).rejects.toThrow(/passthrough would forward callers' tokens to audience 'api:\/\/beta-executor-app'/);
  });
});
