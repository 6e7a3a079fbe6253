import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, exportSPKI, generateKeyPair, type JWK, SignJWT, type CryptoKey } from 'jose';

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

/**
 * A real local HTTPS OIDC issuer for tests: its own CA (trust it with NODE_EXTRA_CA_CERTS), RS256 keys,
 * discovery + JWKS, key rotation, an outage switch, and a token factory for Entra v1/v2 shapes.
 */
export class TestOidcIssuer {
  readonly tenant = randomUUID();
  readonly clientId = randomUUID();
  authority = '';
  readonly caFile: string;
  jwksRequests = 0;
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
      return new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'JWT', kid: key.kid }).sign(new TextEncoder().encode(key.publicPem));
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
    this.server = createServer({ key: readFileSync(join(this.dir, 'server.key')), cert: readFileSync(join(this.dir, 'server.pem')) }, (req, res) => {
      if (this.down) return req.socket.destroy();
      const url = req.url ?? '';
      const json = (body: unknown) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (url === `/${this.tenant}/v2.0/.well-known/openid-configuration`) {
        return json({
          issuer: this.v2Issuer,
          authorization_endpoint: `${this.authority}/${this.tenant}/oauth2/v2.0/authorize`,
          token_endpoint: `${this.authority}/${this.tenant}/oauth2/v2.0/token`,
          jwks_uri: `${this.authority}/${this.tenant}/discovery/v2.0/keys`,
          id_token_signing_alg_values_supported: ['RS256'],
          response_types_supported: ['code'],
          subject_types_supported: ['pairwise'],
        });
      }
      if (url === `/${this.tenant}/discovery/v2.0/keys`) {
        this.jwksRequests++;
        return json({ keys: this.keys.map((k) => k.publicJwk) });
      }
      res.writeHead(404).end();
    });
    this.server.on('connection', (s: Socket) => {
      this.sockets.add(s);
      s.once('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', () => resolve()));
    const addr = this.server.address();
    this.authority = `https://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  }

  /** A test CA and a server certificate for 127.0.0.1/localhost (openssl). */
  private makeCertificates(): void {
    const d = this.dir;
    const run = (args: string[]) => execFileSync('openssl', args, { cwd: d, stdio: 'pipe' });
    run(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=Stoa Test CA']);
    run(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1']);
    writeFileSync(join(d, 'ext.cnf'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n');
    run(['x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '2', '-extfile', 'ext.cnf']);
  }
}

function b64(o: unknown): string {
  return Buffer.from(JSON.stringify(o)).toString('base64url');
}

async function makeKey(): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const kid = randomUUID();
  return { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' }, publicPem: await exportSPKI(publicKey) };
}
