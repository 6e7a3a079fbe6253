import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startExecutor, type RunningExecutor } from '../../../test/support/executor-process';
import { TestOidcIssuer } from '../../../test/support/oidc-issuer';
import { pyCalls } from '../../../test/support/py-client';
import { v2Client } from '../../../test/support/ts-clients';

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

/** A sessionless 2026-07-28 tools/call: the request the front door serves before Express and Nest. */
const MODERN = {
  jsonrpc: '2.0',
  id: 2,
  method: 'tools/call',
  params: {
    name: 'demo_list_sessions',
    arguments: {},
    _meta: {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {},
    },
  },
};
const MODERN_HEADERS = {
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': 'tools/call',
  'mcp-name': 'demo_list_sessions',
};

/** fetch cannot override Host; node:http can. */
function statusWithHost(port: number, host: string): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/health', headers: { host } }, (res) => {
      res.resume();
      resolve(res.statusCode);
    });
    req.on('error', reject);
    req.end();
  });
}

async function post(url: string, headers: Record<string, string>, body: unknown = INIT): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });
}

describe('Entra ID auth with a real local HTTPS OIDC issuer', () => {
  let idp: TestOidcIssuer;
  let ex: RunningExecutor;

  beforeAll(async () => {
    idp = await TestOidcIssuer.start();
    ex = await startExecutor({
      config: {
        auth: {
          tenant_id: idp.tenant,
          client_id: idp.clientId,
          authority: idp.authority,
          jwks_refetch_cooldown_seconds: 0,
        },
      },
      env: { NODE_EXTRA_CA_CERTS: idp.caFile, PUBLIC_BASE_URL: 'https://stoa.example.test' },
    });
  });
  afterAll(async () => {
    await ex?.stop();
    await idp?.close();
  });

  it('accepts v2 and v1 tokens through a real MCP client', async () => {
    for (const version of ['v2', 'v1'] as const) {
      const c = await v2Client(ex.mcpUrl, 'auto', await idp.token({ version, oid: `u-${version}` }));
      const r = await c.call('execute_demo_code', { code: '6 * 7' });
      await c.close();
      expect(r.json.stdout).toBe('42\n');
    }
  });

  it('accepts a token through the Python mcp client in legacy mode', async () => {
    const [r] = await pyCalls(ex.mcpUrl, 'legacy', [{ tool: 'execute_demo_code', args: { code: "'ok'" } }], {
      token: await idp.token({ oid: 'py' }),
    });
    expect(r?.json.stdout).toBe("'ok'\n");
  });

  it.each([
    ['wrong audience', { aud: 'api://someone-else' }, 'invalid audience'],
    ['wrong issuer', { iss: 'https://evil.example/tenant/v2.0' }, 'invalid issuer'],
    ['expired', { expiresIn: -3600 }, 'expired'],
    ['bad signature', { signing: 'bad-signature' }, 'signature is invalid'],
    ['unknown kid', { signing: 'unknown-kid' }, 'unknown key'],
    ['alg none', { signing: 'none' }, "algorithm 'none'"],
    ['HS256 keyed with the public key', { signing: 'hs256-public-key' }, "algorithm 'HS256'"],
  ] as const)('rejects a token with %s: 401 with an invalid_token challenge', async (_, opts, reason) => {
    const res = await post(ex.mcpUrl, { authorization: `Bearer ${await idp.token(opts)}` });
    expect(res.status).toBe(401);
    const challenge = res.headers.get('www-authenticate') ?? '';
    expect(challenge).toContain(
      'Bearer resource_metadata="https://stoa.example.test/.well-known/oauth-protected-resource/mcp"',
    );
    expect(challenge).toContain('error="invalid_token"');
    expect(((await res.json()) as { error_description: string }).error_description).toContain(reason);
  });

  it('rejects garbage with invalid_token and a missing token with a bare challenge', async () => {
    const garbage = await post(ex.mcpUrl, { authorization: 'Bearer not.a.jwt' });
    expect(garbage.status).toBe(401);
    expect(garbage.headers.get('www-authenticate')).toContain('error="invalid_token"');
    const missing = await post(ex.mcpUrl, {});
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe(
      'Bearer resource_metadata="https://stoa.example.test/.well-known/oauth-protected-resource/mcp"',
    );
  });

  it('answers a sessionless 2026-07-28 call without a valid token exactly as the guarded route does', async () => {
    // The front door serves these before Nest; a caller it cannot authenticate takes the guarded route's 401.
    const garbage = await post(ex.mcpUrl, { ...MODERN_HEADERS, authorization: 'Bearer not.a.jwt' }, MODERN);
    expect(garbage.status).toBe(401);
    expect(garbage.headers.get('www-authenticate')).toContain('error="invalid_token"');
    const missing = await post(ex.mcpUrl, MODERN_HEADERS, MODERN);
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe(
      'Bearer resource_metadata="https://stoa.example.test/.well-known/oauth-protected-resource/mcp"',
    );
    const ok = await post(ex.mcpUrl, { ...MODERN_HEADERS, authorization: `Bearer ${await idp.token()}` }, MODERN);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const body = (await ok.json()) as { result: { content: { text: string }[] } };
    expect(JSON.parse(body.result.content[0]!.text)).toMatchObject({ success: true });
  });

  it('never accepts a token in the query string', async () => {
    const res = await post(`${ex.mcpUrl}?access_token=${await idp.token()}`, {});
    expect(res.status).toBe(401);
  });

  it('accepts a token signed with a rotated key without a restart', async () => {
    await idp.rotate();
    const c = await v2Client(ex.mcpUrl, 'auto', await idp.token({ oid: 'rotated' }));
    const r = await c.call('execute_demo_code', { code: '1 + 1' });
    await c.close();
    expect(r.json.stdout).toBe('2\n');
  });

  it('answers 503 (not 401) when the identity provider is unreachable', async () => {
    const before = idp.jwksRequests;
    await idp.rotate(); // a new kid forces a key refetch, which fails while the IdP is down
    const token = await idp.token();
    idp.setDown(true);
    try {
      for (const [headers, body] of [
        [{}, INIT],
        [MODERN_HEADERS, MODERN], // the front door's path
      ] as const) {
        const res = await post(ex.mcpUrl, { ...headers, authorization: `Bearer ${token}` }, body);
        expect(res.status).toBe(503);
        expect(res.headers.get('www-authenticate')).toBeNull();
        expect(((await res.json()) as { error_description: string }).error_description).toContain(
          'Cannot reach the identity provider',
        );
      }
    } finally {
      idp.setDown(false);
    }
    expect(idp.jwksRequests).toBe(before);
    expect((await post(ex.mcpUrl, { authorization: `Bearer ${token}` })).status).toBe(200);
  });

  it('isolates two users on every session tool while the admin sees both', async () => {
    const alice = await v2Client(ex.mcpUrl, 'auto', await idp.token({ oid: 'alice' }));
    const bob = await v2Client(ex.mcpUrl, 'auto', await idp.token({ oid: 'bob' }));
    const a = await alice.call('execute_demo_code', { code: 'token_secret = 1' });
    const b = await bob.call('execute_demo_code', { code: 'pass' });
    const sid = a.json.session_id as string;
    const notFound = `Session ${sid} not found. It may have expired or been cleaned up. Active sessions: 1`;
    expect((await bob.call('execute_demo_code', { code: 'token_secret', execution_session_id: sid })).json.error).toBe(
      notFound,
    );
    expect((await bob.call('demo_inspect_session', { session_id: sid })).json.error).toBe(notFound);
    expect((await bob.call('demo_get_session_info', { session_id: sid })).json.error).toBe(
      `Session not found: ${notFound}`,
    );
    expect((await bob.call('demo_list_sessions', {})).json.count).toBe(1);
    await bob.call('demo_close_session', { session_id: sid });
    expect(
      (await alice.call('execute_demo_code', { code: 'token_secret', execution_session_id: sid })).json.stdout,
    ).toBe('1\n');
    await alice.close();
    await bob.close();

    const admin = { authorization: `Bearer ${await idp.token({ oid: 'ops', roles: ['Stoa.Admin'] })}` };
    const list = (await (await fetch(`${ex.url}/admin/v1/sessions?status=active`, { headers: admin })).json()) as {
      sessions: { session_id: string; owner: string }[];
    };
    const owners = new Map(list.sessions.map((s) => [s.session_id, s.owner]));
    expect(owners.get(sid)).toBe(`alice@${idp.tenant}`);
    expect(owners.get(b.json.session_id as string)).toBe(`bob@${idp.tenant}`);
    const one = await fetch(`${ex.url}/admin/v1/sessions/${sid}`, { headers: admin });
    expect(((await one.json()) as { owner: string }).owner).toBe(`alice@${idp.tenant}`);
    const closed = await fetch(`${ex.url}/admin/v1/sessions/${sid}`, { method: 'DELETE', headers: admin });
    expect(closed.status).toBe(200);
    const docs = await fetch(`${ex.url}/admin/docs`, { headers: admin });
    expect(((await docs.json()) as { openapi: string; paths: Record<string, unknown> }).paths).toHaveProperty(
      '/admin/v1/sessions',
    );
  });

  it('answers 403 without a challenge to a non-admin on /admin/v1', async () => {
    const res = await fetch(`${ex.url}/admin/v1/sessions`, {
      headers: { authorization: `Bearer ${await idp.token({ oid: 'carol' })}` },
    });
    expect(res.status).toBe(403);
    expect(res.headers.get('www-authenticate')).toBeNull();
    expect(((await res.json()) as { error_description: string }).error_description).toContain("'Stoa.Admin' app role");
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('publishes RFC 9728 metadata at the root and path-suffixed URLs without auth', async () => {
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
      const doc = await (await fetch(`${ex.url}${path}`)).json();
      expect(doc).toEqual({
        resource: `api://${idp.clientId}`,
        authorization_servers: [idp.v2Issuer],
        scopes_supported: [`api://${idp.clientId}/.default`],
        bearer_methods_supported: ['header'],
      });
    }
    expect((await fetch(`${ex.url}/.well-known/oauth-authorization-server`)).status).toBe(404);
    expect((await fetch(`${ex.url}/health`)).status).toBe(200);
  });

  it('rejects a foreign Host header and an oversized body with clear errors', async () => {
    const token = `Bearer ${await idp.token()}`;
    expect(await statusWithHost(ex.port, 'attacker.example')).toBe(403);
    expect(await statusWithHost(ex.port, `localhost:${ex.port}`)).toBe(200);
    const badOrigin = await post(ex.mcpUrl, { authorization: token, origin: 'https://attacker.example' });
    expect(badOrigin.status).toBe(403);
    const modernOrigin = { ...MODERN_HEADERS, authorization: token, origin: 'https://attacker.example' };
    const badModern = await post(ex.mcpUrl, modernOrigin, MODERN);
    expect(badModern.status).toBe(403); // checked before the front door too
    expect(((await badModern.json()) as { error: string }).error).toBe('forbidden_origin');
    const big = await post(ex.mcpUrl, { authorization: token }, { ...INIT, pad: 'x'.repeat(5 * 1024 * 1024) });
    expect(big.status).toBe(413);
    // At /mcp a refused body is a JSON-RPC error (clients read error.message).
    expect(((await big.json()) as { error: { code: number; message: string } }).error).toMatchObject({
      code: -32600,
      message: expect.stringContaining('limit is 4 MiB'),
    });
  });
});
