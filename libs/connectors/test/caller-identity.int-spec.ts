import { readFileSync } from 'node:fs';
import { decodeJwt } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { noopPrincipal } from '@stoa/auth';
import { ConfigError } from '@stoa/config';
import type { Principal } from '@stoa/core';
import type { TestOidcIssuer } from '../../../test/support/oidc-issuer';
import {
  httpsNetworkClient,
  upstreamAuthSchema,
  UpstreamCredentials,
  type ConnectorIdentity,
} from '../src/credentials';
import { CONNECTOR_SECRET, entraConnector, entraUser, startConnectorIssuer, UPSTREAM } from './entra-fixture';

/** Upstream auth blocks as the seed docs write them (no mode), and shared identities beside real auth. */
let idp: TestOidcIssuer;
let entra: ConnectorIdentity;
const noop: ConnectorIdentity = { mode: 'noop', audiences: [] };

beforeAll(async () => {
  idp = await startConnectorIssuer();
  entra = entraConnector(idp);
});
afterAll(async () => {
  await idp?.close();
});
afterEach(() => {
  vi.unstubAllEnvs();
});

function credentials(auth: unknown, connector: ConnectorIdentity): UpstreamCredentials {
  return new UpstreamCredentials('files', upstreamAuthSchema.parse(auth), {
    connector,
    msal: { authorityMetadata: JSON.stringify(idp.openidConfiguration()) },
    networkClient: httpsNetworkClient({ ca: readFileSync(idp.caFile) }),
  });
}

const user = (oid: string) => entraUser(idp, oid);

/** The principal a no-op upstream resolves from the Authorization header it receives. */
const seenUpstream = (header: string | undefined) => noopPrincipal(header).id;

describe('an upstream auth block without mode', () => {
  it("forwards an Entra caller's own token when the upstream shares the connector's audience", async () => {
    for (const auth of [undefined, { audience: `api://${idp.clientId}` }]) {
      const alice = await user('alice');
      expect(await credentials(auth, entra).authorization(alice)).toBe(`Bearer ${alice.token}`);
    }
  });

  it("exchanges the caller's token on behalf of the caller when the upstream's audience differs, with the connector's app registration", async () => {
    vi.stubEnv('UPSTREAM_CLIENT_SECRET', CONNECTOR_SECRET);
    const c = credentials({ audience: UPSTREAM }, entra);
    expect(c.mode).toBe('obo');
    const header = await c.authorization(await user('bob'));
    expect(decodeJwt(String(header).slice('Bearer '.length))).toMatchObject({
      aud: UPSTREAM,
      oid: 'bob',
      azp: idp.clientId,
    });
  });

  it('names the secret on-behalf-of still needs when the upstream audience differs and no secret is set', () => {
    expect(() => credentials({ audience: UPSTREAM }, entra)).toThrow(ConfigError);
    expect(() => credentials({ audience: UPSTREAM }, entra)).toThrow(
      /not this connector's own.*on-behalf-of.*auth\.client_secret: .*UPSTREAM_CLIENT_SECRET/s,
    );
  });

  it("forwards a no-op caller's own dev token unchanged", async () => {
    const p = noopPrincipal('Bearer eyJhbGciOiJub25lIn0.eyJvaWQiOiJjYXJvbCIsInRpZCI6InQifQ.');
    expect(await credentials(undefined, noop).authorization(p)).toBe(`Bearer ${p.token}`);
  });

  it('sends a no-op caller without a token as that same principal, so distinct callers stay distinct upstream', async () => {
    const c = credentials(undefined, noop);
    const dev = noopPrincipal(undefined);
    const named: Principal = { id: 'erin@lab', roles: [], scopes: [], source: 'noop' };
    expect(seenUpstream(await c.authorization(dev))).toBe(dev.id);
    expect(seenUpstream(await c.authorization(named))).toBe('erin@lab');
  });
});

describe('a shared upstream identity (none, client_credentials)', () => {
  it('is refused beside Entra auth, naming shared_identity_acknowledged', () => {
    vi.stubEnv('UPSTREAM_CLIENT_SECRET', CONNECTOR_SECRET);
    for (const auth of [
      { mode: 'none' },
      {
        mode: 'client_credentials',
        audience: UPSTREAM,
        tenant_id: idp.tenant,
        client_id: idp.clientId,
        authority: idp.authority,
      },
    ]) {
      const c = credentials(auth, entra);
      expect(() => c.assertUsable()).toThrow(ConfigError);
      expect(() => c.assertUsable()).toThrow(
        /every caller reaches upstream "files" as one and the same identity.*shared_identity_acknowledged: true/s,
      );
    }
  });

  it('runs beside Entra auth once shared_identity_acknowledged is set', () => {
    expect(() => credentials({ mode: 'none', shared_identity_acknowledged: true }, entra).assertUsable()).not.toThrow();
  });

  it('runs under no-op auth without acknowledgement', () => {
    expect(() => credentials({ mode: 'none' }, noop).assertUsable()).not.toThrow();
  });
});
