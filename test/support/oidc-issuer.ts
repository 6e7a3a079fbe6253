import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createLocalJWKSet,
  errors as joseErrors,
  exportJWK,
  exportSPKI,
  generateKeyPair,
  type JWK,
  type JWTPayload,
  jwtVerify,
  SignJWT,
  type CryptoKey,
} from 'jose';

interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
  publicPem: string;
}

export interface TokenOptions {
  version?: 'v1' | 'v2';
  oid?: string;
  sub?: string;
  tid?: string;
  aud?: string;
  iss?: string;
  /** Seconds until expiry; negative = already expired. */
  expiresIn?: number;
  roles?: string[];
  scp?: string;
  name?: string;
  /** How to sign: the published key (default), an unpublished key under the published kid (bad signature), an unknown kid, alg none, or HS256 keyed with the public key PEM. */
  signing?: 'valid' | 'bad-signature' | 'unknown-kid' | 'none' | 'hs256-public-key';
}

/** Grants the token endpoint serves (Entra OBO is the jwt-bearer grant with requested_token_use=on_behalf_of). */
export type TokenGrant = 'on_behalf_of' | 'client_credentials';

/** A confidential client known to the token endpoint. */
export interface RegisteredClient {
  clientId: string;
  /** The `oid` of its app-only tokens. */
  servicePrincipalId: string;
  /** App roles granted to it, put in its client-credentials tokens. */
  roles: string[];
}

interface TokenReply {
  status: number;
  body: Record<string, unknown>;
}

const OIDC_SCOPES = new Set(['openid', 'profile', 'offline_access', 'email']);

/**
 * A real local HTTPS OIDC issuer for tests: its own CA (trust it with NODE_EXTRA_CA_CERTS), RS256 keys,
 * discovery + JWKS, key rotation, an outage switch, a token factory for Entra v1/v2 shapes, and an
 * Entra-like token endpoint (on-behalf-of and client credentials for registered confidential clients).
 */
export class TestOidcIssuer {
  readonly tenant = randomUUID();
  readonly clientId = randomUUID();
  authority = '';
  readonly caFile: string;
  jwksRequests = 0;
  /** Token endpoint requests per grant, counted before any check (failures count too). */
  readonly tokenRequests: Record<TokenGrant, number> = { on_behalf_of: 0, client_credentials: 0 };
  /** `expires_in` (seconds) of tokens the token endpoint issues. */
  accessTokenLifetime = 3600;
  private readonly clients = new Map<string, RegisteredClient & { secret: string }>();
  private down = false;
  private keys: SigningKey[] = [];
  private server!: Server;
  private readonly sockets = new Set<Socket>();
  private readonly dir = mkdtempSync(join(tmpdir(), 'stoa-oidc-'));

  private constructor() {
    this.caFile = join(this.dir, 'ca.pem');
  }

  static async start(): Promise<TestOidcIssuer> {
    const issuer = new TestOidcIssuer();
    await issuer.init();
    return issuer;
  }

  /** The v2 issuer string (`{authority}/{tenant}/v2.0`). */
  get v2Issuer(): string {
    return `${this.authority}/${this.tenant}/v2.0`;
  }

  /** The tenant's openid-configuration document (as served at `{authority}/{tenant}/v2.0/.well-known/openid-configuration`). */
  openidConfiguration(): Record<string, unknown> {
    return {
      issuer: this.v2Issuer,
      authorization_endpoint: `${this.authority}/${this.tenant}/oauth2/v2.0/authorize`,
      token_endpoint: `${this.authority}/${this.tenant}/oauth2/v2.0/token`,
      jwks_uri: `${this.authority}/${this.tenant}/discovery/v2.0/keys`,
      id_token_signing_alg_values_supported: ['RS256'],
      response_types_supported: ['code'],
      subject_types_supported: ['pairwise'],
    };
  }

  /** Registers (or replaces) a confidential client the token endpoint accepts with `secret`. */
  registerClient(clientId: string, secret: string, options: { roles?: string[] } = {}): RegisteredClient {
    const client = { clientId, servicePrincipalId: randomUUID(), roles: options.roles ?? [] };
    this.clients.set(clientId, { ...client, secret });
    return client;
  }

  /** A fresh signing key replaces the published one (old tokens stop validating once keys are refetched). */
  async rotate(): Promise<void> {
    this.keys = [await makeKey()];
  }

  /** While down, every connection is reset (the IdP is unreachable). */
  setDown(down: boolean): void {
    this.down = down;
    if (down) for (const s of this.sockets) s.destroy();
  }

  async token(o: TokenOptions = {}): Promise<string> {
    const key = this.keys[0] as SigningKey;
    const v1 = o.version === 'v1';
    const now = Math.floor(Date.now() / 1000);
    const claims = {
      aud: o.aud ?? (v1 ? `api://${this.clientId}` : this.clientId),
      iss: o.iss ?? (v1 ? `https://sts.windows.net/${this.tenant}/` : this.v2Issuer),
      oid: o.oid ?? 'user-1',
      sub: o.sub ?? `sub-${o.oid ?? 'user-1'}`,
      tid: o.tid ?? this.tenant,
      name: o.name ?? o.oid ?? 'Test User',
      ver: v1 ? '1.0' : '2.0',
      ...(o.roles ? { roles: o.roles } : {}),
      ...(o.scp ? { scp: o.scp } : {}),
      iat: now,
      nbf: now - 5,
      exp: now + (o.expiresIn ?? 3600),
    };
    const signing = o.signing ?? 'valid';
    if (signing === 'none') return `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`;
    if (signing === 'hs256-public-key') {
      return new SignJWT(claims)
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT', kid: key.kid })
        .sign(new TextEncoder().encode(key.publicPem));
    }
    const signer = signing === 'valid' ? key : await makeKey();
    const kid = signing === 'unknown-kid' ? `unknown-${randomUUID()}` : key.kid;
    return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid }).sign(signer.privateKey);
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async init(): Promise<void> {
    this.makeCertificates();
    this.keys = [await makeKey()];
    this.server = createServer(
      { key: readFileSync(join(this.dir, 'server.key')), cert: readFileSync(join(this.dir, 'server.pem')) },
      (req, res) => {
        if (this.down) return req.socket.destroy();
        const url = req.url ?? '';
        const json = (body: unknown, status = 200) => {
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(JSON.stringify(body));
        };
        if (url === `/${this.tenant}/v2.0/.well-known/openid-configuration`) return json(this.openidConfiguration());
        if (url === `/${this.tenant}/discovery/v2.0/keys`) {
          this.jwksRequests++;
          return json({ keys: this.keys.map((k) => k.publicJwk) });
        }
        if (req.method === 'POST' && url.split('?')[0] === `/${this.tenant}/oauth2/v2.0/token`) {
          return void this.tokenEndpoint(req).then(
            (r) => json(r.body, r.status),
            (err: Error) => json({ error: 'server_error', error_description: err.message }, 500),
          );
        }
        res.writeHead(404).end();
      },
    );
    this.server.on('connection', (s: Socket) => {
      this.sockets.add(s);
      s.once('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', () => resolve()));
    const addr = this.server.address();
    this.authority = `https://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  }

  private async tokenEndpoint(req: IncomingMessage): Promise<TokenReply> {
    const form = new URLSearchParams(await readBody(req));
    const cid = form.get('client-request-id') ?? randomUUID();
    const fail = (status: number, error: string, code: number, description: string) =>
      aadError(status, error, code, description, cid);
    const grantType = form.get('grant_type');
    const grant: TokenGrant | undefined =
      grantType === 'client_credentials'
        ? 'client_credentials'
        : grantType === 'urn:ietf:params:oauth:grant-type:jwt-bearer' &&
            form.get('requested_token_use') === 'on_behalf_of'
          ? 'on_behalf_of'
          : undefined;
    if (!grant)
      return fail(
        400,
        'unsupported_grant_type',
        70003,
        `The app requested an unsupported grant type '${grantType ?? ''}'.`,
      );
    this.tokenRequests[grant]++;

    const clientId = form.get('client_id');
    if (!clientId)
      return fail(
        400,
        'invalid_request',
        900144,
        "The request body must contain the following parameter: 'client_id'.",
      );
    const client = this.clients.get(clientId);
    if (!client)
      return fail(
        400,
        'unauthorized_client',
        700016,
        `Application with identifier '${clientId}' was not found in the directory '${this.tenant}'.`,
      );
    const secret = form.get('client_secret');
    if (!secret)
      return fail(
        401,
        'invalid_client',
        7000218,
        "The request body must contain the following parameter: 'client_assertion' or 'client_secret'.",
      );
    if (secret !== client.secret) {
      return fail(
        401,
        'invalid_client',
        7000215,
        `Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID, for a secret added to app '${clientId}'.`,
      );
    }

    const scopes = (form.get('scope') ?? '').split(' ').filter((s) => s && !OIDC_SCOPES.has(s));
    const resources = new Set(scopes.map((s) => s.slice(0, s.lastIndexOf('/'))));
    const [audience] = resources;
    if (!audience || resources.size !== 1)
      return fail(
        400,
        'invalid_scope',
        70011,
        `The provided value for the input parameter 'scope' is not valid: '${scopes.join(' ')}' must name exactly one resource.`,
      );
    const names = scopes.map((s) => s.slice(s.lastIndexOf('/') + 1));
    if (grant === 'client_credentials') {
      if (names.some((n) => n !== '.default'))
        return fail(
          400,
          'invalid_scope',
          1002012,
          `The provided value for scope ${scopes.join(' ')} is not valid. Client credential flows must have a scope value with /.default suffixed to the resource identifier (application ID URI).`,
        );
      return this.issue(scopes, {
        aud: audience,
        oid: client.servicePrincipalId,
        sub: client.servicePrincipalId,
        azp: clientId,
        idtyp: 'app',
        ...(client.roles.length ? { roles: client.roles } : {}),
      });
    }
    const verified = await this.verifyAssertion(form.get('assertion') ?? '', clientId, cid);
    if ('refused' in verified) return verified.refused;
    const user = verified.claims;
    if (typeof user.scp !== 'string' || !user.scp)
      return fail(
        400,
        'invalid_request',
        7000114,
        `Application '${clientId}' is not allowed to make application on-behalf-of calls.`,
      );
    const scp = names.map((n) => (n === '.default' ? 'user_impersonation' : n)).join(' ');
    const reply = await this.issue(scopes, {
      aud: audience,
      oid: user.oid,
      sub: user.sub,
      tid: user.tid,
      name: user.name,
      azp: clientId,
      scp,
    });
    reply.body.client_info = Buffer.from(JSON.stringify({ uid: user.oid, utid: user.tid })).toString('base64url');
    return reply;
  }

  /** The claims of a user token this issuer signed for `clientId`, or the AAD error refusing it. */
  private async verifyAssertion(
    assertion: string,
    clientId: string,
    cid: string,
  ): Promise<{ claims: JWTPayload } | { refused: TokenReply }> {
    try {
      const { payload } = await jwtVerify(assertion, createLocalJWKSet({ keys: this.keys.map((k) => k.publicJwk) }), {
        algorithms: ['RS256'],
        issuer: [this.v2Issuer, `https://sts.windows.net/${this.tenant}/`],
      });
      const aud = [payload.aud ?? []].flat();
      if (!aud.includes(clientId) && !aud.includes(`api://${clientId}`)) {
        const description = `Assertion audience does not match the Client app presenting the assertion. The audience in the assertion was '${aud.join(' ')}' and the expected audience is '${clientId}' or one of the Application Id URIs of this application.`;
        return { refused: aadError(400, 'invalid_grant', 50013, description, cid) };
      }
      return { claims: payload };
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired)
        return {
          refused: aadError(400, 'invalid_grant', 500133, 'Assertion is not within its valid time range.', cid),
        };
      return {
        refused: aadError(
          400,
          'invalid_grant',
          50013,
          `Assertion failed signature validation. [Reason - ${(err as Error).message}]`,
          cid,
        ),
      };
    }
  }

  private async issue(scopes: string[], claims: Record<string, unknown>): Promise<TokenReply> {
    const key = this.keys[0] as SigningKey;
    const now = Math.floor(Date.now() / 1000);
    const expiresIn = this.accessTokenLifetime;
    const accessToken = await new SignJWT({
      iss: this.v2Issuer,
      tid: this.tenant,
      ver: '2.0',
      ...claims,
      iat: now,
      nbf: now - 5,
      exp: now + expiresIn,
    })
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: key.kid })
      .sign(key.privateKey);
    return {
      status: 200,
      body: {
        token_type: 'Bearer',
        scope: scopes.join(' '),
        expires_in: expiresIn,
        ext_expires_in: expiresIn,
        access_token: accessToken,
      },
    };
  }

  /** A test CA and a server certificate for 127.0.0.1/localhost (openssl). */
  private makeCertificates(): void {
    const d = this.dir;
    const run = (args: string[]) => execFileSync('openssl', args, { cwd: d, stdio: 'pipe' });
    run([
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      'ca.key',
      '-out',
      'ca.pem',
      '-days',
      '2',
      '-subj',
      '/CN=Stoa Test CA',
    ]);
    run([
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      'server.key',
      '-out',
      'server.csr',
      '-subj',
      '/CN=127.0.0.1',
    ]);
    writeFileSync(
      join(d, 'ext.cnf'),
      'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n',
    );
    run([
      'x509',
      '-req',
      '-in',
      'server.csr',
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      'server.pem',
      '-days',
      '2',
      '-extfile',
      'ext.cnf',
    ]);
  }
}

/** An error in Entra's shape: `AADSTS{code}: …` plus trace/correlation ids and `error_codes`. */
function aadError(
  status: number,
  error: string,
  code: number,
  description: string,
  correlationId: string = randomUUID(),
): TokenReply {
  const traceId = randomUUID();
  const timestamp = new Date()
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, 'Z');
  return {
    status,
    body: {
      error,
      error_description: `AADSTS${code}: ${description} Trace ID: ${traceId} Correlation ID: ${correlationId} Timestamp: ${timestamp}`,
      error_codes: [code],
      timestamp,
      trace_id: traceId,
      correlation_id: correlationId,
      error_uri: `https://login.microsoftonline.com/error?code=${code}`,
    },
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function b64(o: unknown): string {
  return Buffer.from(JSON.stringify(o)).toString('base64url');
}

async function makeKey(): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const kid = randomUUID();
  return {
    kid,
    privateKey,
    publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' },
    publicPem: await exportSPKI(publicKey),
  };
}
