import { readFileSync } from 'node:fs';
import type { INetworkModule } from '@azure/msal-node';
import { decodeJwt } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ConfigError } from '@stoa/config';
import type { Principal } from '@stoa/core';
import type { TestOidcIssuer } from '../../../test/support/oidc-issuer';
import {
  httpsNetworkClient,
  upstreamAuthSchema,
  UpstreamCredentials,
  UpstreamIdentityError,
  UpstreamTokenError,
  type UpstreamCredentialsOptions,
} from '../src/credentials';
import { CONNECTOR_SECRET, entraConnector, entraUser, startConnectorIssuer, UPSTREAM } from './entra-fixture';

let idp: TestOidcIssuer;
let network: INetworkModule;
/** Every URL MSAL asked for, in order. */
const requested: string[] = [];

beforeAll(async () => {
  idp = await startConnectorIssuer();
  const https = httpsNetworkClient({ ca: readFileSync(idp.caFile) });
  network = {
    sendGetRequestAsync: (url, o, t) => (requested.push(url), https.sendGetRequestAsync(url, o, t)),
    sendPostRequestAsync: (url, o) => (requested.push(url), https.sendPostRequestAsync(url, o)),
  };
});
afterAll(async () => {
  await idp?.close();
});
afterEach(() => {
  idp.accessTokenLifetime = 3600;
  idp.setDown(false);
  vi.unstubAllEnvs();
});

function options(overrides: Partial<UpstreamCredentialsOptions> = {}): UpstreamCredentialsOptions {
  return {
    connector: entraConnector(idp),
    msal: { authorityMetadata: JSON.stringify(idp.openidConfiguration()) },
    networkClient: network,
    ...overrides,
  };
}

function credentials(
  auth: Record<string, unknown>,
  overrides: Partial<UpstreamCredentialsOptions> = {},
): UpstreamCredentials {
  const base =
    auth.mode === 'obo' || auth.mode === 'client_credentials'
      ? { tenant_id: idp.tenant, client_id: idp.clientId, client_secret: CONNECTOR_SECRET, authority: idp.authority }
      : {};
  return new UpstreamCredentials('files', upstreamAuthSchema.parse({ ...base, ...auth }), options(overrides));
}

const user = (oid: string, token?: string) => entraUser(idp, oid, token);

function bearer(header: string | undefined): string {
  expect(header).toMatch(/^Bearer /);
  return (header as string).slice('Bearer '.length);
}

async function failure(p: Promise<unknown>): Promise<Error> {
  return p.then(
    () => expect.fail('expected a rejection'),
    (err: Error) => err,
  );
}

describe('upstreamAuthSchema', () => {
  const issues = (raw: unknown) =>
    upstreamAuthSchema.safeParse(raw).error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`) ?? [];

  it("leaves an upstream without auth.mode to the caller's own identity, never to a shared one", () => {
    expect(upstreamAuthSchema.parse(undefined)).toMatchObject({ mode: 'caller' });
    expect(upstreamAuthSchema.parse({ audience: UPSTREAM })).toMatchObject({ mode: 'caller', audience: UPSTREAM });
  });

  it("takes passthrough without an audience as the connector's own audience", () => {
    expect(upstreamAuthSchema.parse({ mode: 'passthrough' })).toEqual({ mode: 'passthrough' });
  });

  it('lists every key obo is missing, naming the secret variable to set', () => {
    const found = issues({ mode: 'obo' });
    expect(found).toHaveLength(4);
    expect(found).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^audience: required when mode is obo/),
        expect.stringMatching(/^tenant_id: required when mode is obo/),
        expect.stringMatching(/^client_id: required when mode is obo/),
        expect.stringMatching(
          /^client_secret: required when mode is obo: set the environment variable UPSTREAM_CLIENT_SECRET/,
        ),
      ]),
    );
  });

  it('reads the secret from the variable named by client_secret_env, and defaults the scope to {audience}/.default', () => {
    vi.stubEnv('FILES_SECRET', 's3cret');
    const c = upstreamAuthSchema.parse({
      mode: 'client_credentials',
      audience: UPSTREAM,
      tenant_id: 't',
      client_id: 'c',
      client_secret_env: 'FILES_SECRET',
    });
    expect(c).toEqual({
      mode: 'client_credentials',
      audience: UPSTREAM,
      scopes: [`${UPSTREAM}/.default`],
      tenantId: 't',
      clientId: 'c',
      clientSecret: 's3cret',
      authority: 'https://login.microsoftonline.com',
    });
  });

  it('reads the secret from UPSTREAM_CLIENT_SECRET by default', () => {
    vi.stubEnv('UPSTREAM_CLIENT_SECRET', 'from-env');
    const c = upstreamAuthSchema.parse({ mode: 'obo', audience: UPSTREAM, tenant_id: 't', client_id: 'c' });
    expect(c.mode === 'obo' && c.clientSecret).toBe('from-env');
  });

  it('refuses delegated scopes for client_credentials, a multi-tenant alias, two secret sources and unknown keys', () => {
    expect(
      issues({
        mode: 'client_credentials',
        audience: UPSTREAM,
        tenant_id: 'common',
        client_id: 'c',
        client_secret: 'x',
        client_secret_env: 'X',
        scopes: [`${UPSTREAM}/Files.Read`],
      }),
    ).toEqual([
      expect.stringMatching(/^tenant_id: must be the router's tenant id or domain, not 'common'/),
      'client_secret: set either client_secret or client_secret_env, not both',
      expect.stringMatching(/^scopes: client_credentials needs `\{audience\}\/\.default` scopes/),
    ]);
    expect(issues({ mode: 'none', clientID: 'x' })).toEqual([expect.stringContaining('clientID')]);
  });
});

describe('mode none and passthrough', () => {
  it('sends no Authorization header when the upstream takes no auth', async () => {
    expect(await credentials({ mode: 'none' }).authorization(await user('nobody'))).toBeUndefined();
  });

  it('refuses passthrough at startup when the upstream is another resource, and says to use obo', async () => {
    const c = credentials({ mode: 'passthrough', audience: UPSTREAM });
    const err = await failure(Promise.resolve().then(() => c.assertUsable()));
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toContain(
      `audience '${UPSTREAM}', which is not this router's own ('${idp.clientId}', 'api://${idp.clientId}')`,
    );
    expect(err.message).toContain('MCP forbids token passthrough');
    expect(err.message).toContain('Use mode: obo');
    expect(await failure(c.authorization(await user('alice')))).toBeInstanceOf(ConfigError);
  });

  it('accepts any passthrough audience label when the connector runs no-op auth (its tokens are unverified dev tokens)', () => {
    const c = credentials({ mode: 'passthrough', audience: 'dev' }, { connector: { mode: 'noop', audiences: [] } });
    expect(() => c.assertUsable()).not.toThrow();
  });

  it('forwards the caller token to an upstream that is the same protected resource', async () => {
    const c = credentials({ mode: 'passthrough', audience: `api://${idp.clientId}` });
    const alice = await user('alice');
    expect(() => c.assertUsable()).not.toThrow();
    expect(await c.authorization(alice)).toBe(`Bearer ${alice.token}`);
  });

  it('explains that passthrough needs a token when the caller has none', async () => {
    const c = credentials({ mode: 'passthrough', audience: idp.clientId });
    const anonymous: Principal = { id: 'dev-user@dev-tenant', roles: [], scopes: [], source: 'noop' };
    const err = await failure(c.authorization(anonymous));
    expect(err).toBeInstanceOf(UpstreamIdentityError);
    expect(err.message).toContain('carries no bearer token (no-op auth without a token)');
  });
});

describe('mode obo against a real HTTPS issuer', () => {
  it('exchanges the caller token for one issued to the upstream, for the same user, calling only the token endpoint', async () => {
    requested.length = 0;
    const alice = await user('alice');
    const claims = decodeJwt(bearer(await credentials({ mode: 'obo', audience: UPSTREAM }).authorization(alice)));
    expect(claims).toMatchObject({
      aud: UPSTREAM,
      oid: 'alice',
      tid: idp.tenant,
      azp: idp.clientId,
      scp: 'user_impersonation',
      iss: idp.v2Issuer,
    });
    expect(requested).toEqual([expect.stringMatching(new RegExp(`^${idp.authority}/${idp.tenant}/oauth2/v2.0/token`))]);
  });

  it('discovers endpoints from the configured authority, not login.microsoftonline.com, without authorityMetadata', async () => {
    requested.length = 0;
    const c = credentials({ mode: 'obo', audience: UPSTREAM }, { msal: {} });
    expect(decodeJwt(bearer(await c.authorization(await user('dora')))).aud).toBe(UPSTREAM);
    expect(requested.every((u) => u.startsWith(`${idp.authority}/${idp.tenant}/`))).toBe(true);
    expect(requested.map((u) => new URL(u).pathname)).toContain(`/${idp.tenant}/v2.0/.well-known/openid-configuration`);
  });

  it('reuses a user token for that user, even with a new incoming token, until near expiry', async () => {
    const c = credentials({ mode: 'obo', audience: UPSTREAM });
    const signedIn = await user('bob');
    const first = await c.authorization(signedIn);
    const before = idp.tokenRequests.on_behalf_of;
    const again = await user('bob', await idp.token({ oid: 'bob', scp: 'access_as_user', expiresIn: 1800 }));
    expect(again.token).not.toBe(signedIn.token);
    expect(await c.authorization(again)).toBe(first);
    expect(idp.tokenRequests.on_behalf_of).toBe(before);
  });

  it('gets a separate token for a different user', async () => {
    const c = credentials({ mode: 'obo', audience: UPSTREAM });
    const bob = await c.authorization(await user('bob'));
    const before = idp.tokenRequests.on_behalf_of;
    const carol = await c.authorization(await user('carol'));
    expect(decodeJwt(bearer(carol)).oid).toBe('carol');
    expect(carol).not.toBe(bob);
    expect(idp.tokenRequests.on_behalf_of).toBe(before + 1);
  });

  it('makes one token request for concurrent calls by the same user', async () => {
    const c = credentials({ mode: 'obo', audience: UPSTREAM });
    const erin = await user('erin');
    const before = idp.tokenRequests.on_behalf_of;
    const headers = await Promise.all([1, 2, 3, 4].map(() => c.authorization(erin)));
    expect(new Set(headers).size).toBe(1);
    expect(idp.tokenRequests.on_behalf_of).toBe(before + 1);
  });

  it('renews a token that is within five minutes of expiry', async () => {
    idp.accessTokenLifetime = 120;
    const c = credentials({ mode: 'obo', audience: UPSTREAM });
    const frank = await user('frank');
    await c.authorization(frank);
    const before = idp.tokenRequests.on_behalf_of;
    await c.authorization(frank);
    expect(idp.tokenRequests.on_behalf_of).toBe(before + 1);
  });

  it('keeps serving a still-valid token while the token endpoint is down', async () => {
    idp.accessTokenLifetime = 200; // due for renewal, yet valid for minutes
    const c = credentials({ mode: 'obo', audience: UPSTREAM });
    const gina = await user('gina');
    const first = await c.authorization(gina);
    idp.setDown(true);
    expect(await c.authorization(gina)).toBe(first);
  });

  it('reports an unreachable token endpoint as unavailable', async () => {
    const c = credentials({ mode: 'obo', audience: UPSTREAM });
    const hank = await user('hank');
    idp.setDown(true);
    const err = await failure(c.authorization(hank));
    expect(err).toBeInstanceOf(UpstreamTokenError);
    expect(err.message).toMatch(
      /^Could not get a token for upstream "files" \(mode obo\).*network_error: Network request to https:\/\/127\.0\.0\.1:\d+ failed/,
    );
  });

  it('reports a bad client secret with its AADSTS code, without the secret or the caller token', async () => {
    const c = credentials({ mode: 'obo', audience: UPSTREAM, client_secret: 'not-the-secret' });
    const ivy = await user('ivy');
    const err = await failure(c.authorization(ivy));
    expect(err).toBeInstanceOf(UpstreamTokenError);
    expect((err as UpstreamTokenError).kind).toBe('unavailable');
    expect(err.message).toContain('upstream "files"');
    expect(err.message).toContain('invalid_client: AADSTS7000215: Invalid client secret provided');
    expect(err.message).toContain('Check client_id and the client secret');
    expect(err.message).not.toContain('not-the-secret');
    expect(err.message).not.toContain(ivy.token);
    expect((err as UpstreamTokenError).details).toEqual({ upstream: 'files', aad_error_codes: ['AADSTS7000215'] });
  });

  it('refuses an app-only caller before calling the token endpoint', async () => {
    const c = credentials({ mode: 'obo', audience: UPSTREAM });
    const app: Principal = {
      id: `daemon@${idp.tenant}`,
      roles: ['Files.Read.All'],
      scopes: [],
      source: 'entra',
      token: await idp.token({ oid: 'daemon' }),
    };
    const before = idp.tokenRequests.on_behalf_of;
    const err = await failure(c.authorization(app));
    expect(err).toBeInstanceOf(UpstreamIdentityError);
    expect(err.message).toContain('needs a signed-in user, but the caller is an application');
    expect(err.message).toContain('AADSTS7000114');
    expect(idp.tokenRequests.on_behalf_of).toBe(before);
  });

  it('maps the issuer refusing an app-only assertion (AADSTS7000114) to the same clear error', async () => {
    const c = credentials({ mode: 'obo', audience: UPSTREAM });
    const disguised = await user('daemon', await idp.token({ oid: 'daemon' }));
    const err = await failure(c.authorization(disguised));
    expect(err).toBeInstanceOf(UpstreamIdentityError);
    expect(err.message).toContain('AADSTS7000114: Application');
    expect(err.message).toContain('configure this upstream with mode client_credentials');
  });

  it('reports an assertion the issuer did not sign (AADSTS50013)', async () => {
    const c = credentials({ mode: 'obo', audience: UPSTREAM });
    const forged = await user(
      'mallory',
      await idp.token({ oid: 'mallory', scp: 'access_as_user', signing: 'bad-signature' }),
    );
    const err = await failure(c.authorization(forged));
    expect(err).toBeInstanceOf(UpstreamTokenError);
    expect(err.message).toContain('invalid_grant: AADSTS50013: Assertion failed signature validation');
    expect(err.message).not.toContain(forged.token);
  });
});

describe('mode client_credentials against a real HTTPS issuer', () => {
  it('gets an app token for the upstream and reuses it for every caller', async () => {
    const app = idp.registerClient('router-app', 'app-secret', { roles: ['Files.Read.All'] });
    const c = credentials({
      mode: 'client_credentials',
      audience: UPSTREAM,
      client_id: 'router-app',
      client_secret: 'app-secret',
    });
    const first = await c.authorization(await user('alice'));
    const claims = decodeJwt(bearer(first));
    expect(claims).toMatchObject({
      aud: UPSTREAM,
      oid: app.servicePrincipalId,
      azp: 'router-app',
      roles: ['Files.Read.All'],
      idtyp: 'app',
    });
    expect(claims.scp).toBeUndefined();
    const before = idp.tokenRequests.client_credentials;
    expect(await c.authorization(await user('bob'))).toBe(first);
    expect(idp.tokenRequests.client_credentials).toBe(before);
  });
});
