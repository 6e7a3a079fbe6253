import { createHash } from 'node:crypto';
import { Logger } from '@nestjs/common';
import {
  AuthError,
  ConfidentialClientApplication,
  type AuthenticationResult,
  type INetworkModule,
} from '@azure/msal-node';
import { ConfigError } from '@stoa/config';
import { noopToken } from '@stoa/auth';
import type { Principal } from '@stoa/core';
import { resolveUpstreamAuth, sharedIdentityCheck, type ConnectorIdentity } from './caller-identity';
import { UpstreamIdentityError, UpstreamTokenError } from './credentials.errors';
import { TokenCache, type IssuedToken } from './token-cache';
import type { ConfidentialAuth, ResolvedUpstreamAuth, UpstreamAuthConfig } from './upstream-auth.config';

/** Renew this long before expiry (MSAL's own cache uses the same offset). */
const RENEW_BEFORE_EXPIRY_MS = 5 * 60_000;
/** While renewal fails, keep serving a cached token that stays valid at least this long. */
const GRACE_MS = 60_000;
const JWT = /eyJ[\w-]+\.[\w-]+\.[\w-]*/g;

/** Where MSAL finds the authority without asking login.microsoftonline.com (private clouds, tests). */
export interface MsalAuthorityOverrides {
  /** Hosts (`host[:port]`) trusted without instance discovery; default: the configured authority's host. */
  knownAuthorities?: string[];
  /** The tenant's openid-configuration document as JSON; skips endpoint discovery. */
  authorityMetadata?: string;
  /** An instance-discovery response as JSON (host aliases). */
  cloudDiscoveryMetadata?: string;
}

export interface UpstreamCredentialsOptions {
  /** How the connector authenticates its callers: passthrough goes only to its own audiences, OBO uses its app registration. */
  connector: ConnectorIdentity;
  msal?: MsalAuthorityOverrides;
  /** HTTP client for the identity provider, e.g. `httpsNetworkClient({ ca })` for a private CA. Default: MSAL's (fetch). */
  networkClient?: INetworkModule;
}

/** How the router authenticates to one upstream: the `Authorization` header for a caller's request. */
export class UpstreamCredentials {
  private readonly logger = new Logger(UpstreamCredentials.name);
  private readonly cache = new TokenCache(RENEW_BEFORE_EXPIRY_MS, GRACE_MS);
  private readonly msal: ConfidentialClientApplication | undefined;
  /** Why this config must not run, found once at construction. */
  private readonly problem: string | undefined;
  private readonly config: ResolvedUpstreamAuth;
  /** Callers are no-op principals: one without a token is forwarded as an unsigned JWT naming it. */
  private readonly noopCallers: boolean;

  /** Resolves a block without mode against the connector (throws a ConfigError if on-behalf-of lacks settings). */
  constructor(
    readonly upstream: string,
    config: UpstreamAuthConfig,
    options: UpstreamCredentialsOptions,
  ) {
    this.config = resolveUpstreamAuth(upstream, config, options.connector);
    this.noopCallers = options.connector.mode === 'noop';
    const shared = sharedIdentityCheck(upstream, this.config, options.connector);
    this.problem = passthroughProblem(this.config, options.connector) ?? shared.refusal;
    if (shared.notice) this.logger.warn({ upstream }, shared.notice);
    this.msal =
      this.config.mode === 'obo' || this.config.mode === 'client_credentials'
        ? createMsal(this.config, options)
        : undefined;
  }

  /** The mode in effect (`caller` blocks resolved to passthrough or obo). */
  get mode(): ResolvedUpstreamAuth['mode'] {
    return this.config.mode;
  }

  /** Throws a ConfigError when the config is unsafe to run (passthrough to another resource, a shared identity beside Entra); call at startup. */
  assertUsable(): void {
    if (this.problem) throw new ConfigError(`upstream "${this.upstream}"`, [this.problem]);
  }

  /** `Bearer …` for a request made on behalf of `principal`, or undefined when the upstream takes no auth. */
  async authorization(principal: Principal): Promise<string | undefined> {
    const c = this.config;
    switch (c.mode) {
      case 'none':
        return undefined;
      case 'passthrough':
        this.assertUsable(); // never forward a token to another resource, even if startup skipped the check
        if (principal.token) return `Bearer ${principal.token}`;
        // No-op auth: a caller without a token is still this one principal upstream, never a shared default.
        if (this.noopCallers && principal.source === 'noop') return `Bearer ${noopToken(principal)}`;
        throw this.identityError("forwards the caller's bearer token (mode passthrough)", principal);
      case 'obo':
        return this.onBehalfOf(principal, c);
      case 'client_credentials':
        return this.cache.get(`app ${c.audience}`, () =>
          this.acquire(c, (msal) => msal.acquireTokenByClientCredential({ scopes: c.scopes, skipCache: true })),
        );
    }
  }

  private async onBehalfOf(principal: Principal, c: ConfidentialAuth): Promise<string> {
    const assertion = principal.token;
    if (!assertion)
      throw this.identityError("exchanges the caller's token for one issued to the upstream (mode obo)", principal);
    if (principal.scopes.length === 0) throw this.appOnlyError();
    // Verified Entra identities share a token across their requests; unverified ones (no-op auth) only per exact token.
    const who =
      principal.source === 'entra' ? principal.id : createHash('sha256').update(assertion).digest('base64url');
    return this.cache.get(`${who} ${c.audience}`, () =>
      this.acquire(
        c,
        (msal) => msal.acquireTokenOnBehalfOf({ oboAssertion: assertion, scopes: c.scopes, skipCache: true }),
        assertion,
      ),
    );
  }

  private async acquire(
    c: ConfidentialAuth,
    call: (msal: ConfidentialClientApplication) => Promise<AuthenticationResult | null>,
    assertion?: string,
  ): Promise<IssuedToken> {
    const msal = this.msal as ConfidentialClientApplication;
    let result: AuthenticationResult | null;
    try {
      result = await call(msal);
    } catch (err) {
      throw this.tokenError(c, err, [c.clientSecret, assertion]);
    } finally {
      // Our cache is the one we read; MSAL's would keep one entry per assertion for the life of the process.
      msal.clearCache();
    }
    if (!result?.accessToken) throw this.tokenError(c, new Error('the token endpoint returned no access token'), []);
    this.logger.debug({ upstream: this.upstream, mode: c.mode, expiresOn: result.expiresOn }, 'upstream token issued');
    return { header: `Bearer ${result.accessToken}`, expiresAt: result.expiresOn?.getTime() };
  }

  private tokenError(
    c: ConfidentialAuth,
    err: unknown,
    secrets: Array<string | undefined>,
  ): UpstreamTokenError | UpstreamIdentityError {
    const reason = redact(describe(err), secrets);
    const codes = [...new Set(reason.match(/AADSTS\d+/g) ?? [])];
    this.logger.warn({ upstream: this.upstream, mode: c.mode, codes }, 'upstream token request failed');
    if (codes.includes('AADSTS7000114')) return this.appOnlyError(reason);
    return new UpstreamTokenError(
      `Could not get a token for upstream "${this.upstream}" (mode ${c.mode}) from ${c.authority}/${c.tenantId}: ${reason} ${hint(codes, this.upstream)}`,
      { upstream: this.upstream, ...(codes.length ? { aad_error_codes: codes } : {}) },
    );
  }

  private identityError(what: string, principal: Principal): UpstreamIdentityError {
    const why = principal.source === 'noop' ? ' (no-op auth without a token)' : '';
    return new UpstreamIdentityError(
      `Upstream "${this.upstream}" ${what}, but this request carries no bearer token${why}. Call with an Entra user token; for callers without one the upstream needs mode client_credentials or none (beside Entra auth also shared_identity_acknowledged: true).`,
      { upstream: this.upstream },
    );
  }

  private appOnlyError(reason?: string): UpstreamIdentityError {
    return new UpstreamIdentityError(
      `Upstream "${this.upstream}" uses on-behalf-of auth, which needs a signed-in user, but the caller is an application (app-only token, no delegated scopes)` +
        `${reason ? `: ${reason}` : '; Entra refuses such exchanges with AADSTS7000114.'} Call as a user, or configure this upstream with mode client_credentials.`,
      { upstream: this.upstream },
    );
  }
}

function passthroughProblem(config: ResolvedUpstreamAuth, id: ConnectorIdentity): string | undefined {
  // No-op auth has no audience of its own: any label is accepted (the tokens are unverified dev tokens).
  if (config.mode !== 'passthrough' || id.mode === 'noop' || !config.audience || id.audiences.includes(config.audience))
    return undefined;
  const ours = id.audiences.map((a) => `'${a}'`).join(', ');
  return (
    `auth.mode: passthrough would forward callers' tokens to audience '${config.audience}', which is not this router's own (${ours}). ` +
    'MCP forbids token passthrough unless the upstream is the same protected resource. ' +
    `Use mode: obo so the router gets a token issued for '${config.audience}' on behalf of each caller (or client_credentials for an app identity).`
  );
}

function createMsal(c: ConfidentialAuth, options: UpstreamCredentialsOptions): ConfidentialClientApplication {
  const o = options.msal ?? {};
  return new ConfidentialClientApplication({
    auth: {
      clientId: c.clientId,
      clientSecret: c.clientSecret,
      authority: `${c.authority}/${c.tenantId}`,
      // The operator named this authority; trusting its host skips instance discovery at login.microsoftonline.com.
      knownAuthorities: o.knownAuthorities ?? [new URL(c.authority).host],
      ...(o.authorityMetadata ? { authorityMetadata: o.authorityMetadata } : {}),
      ...(o.cloudDiscoveryMetadata ? { cloudDiscoveryMetadata: o.cloudDiscoveryMetadata } : {}),
    },
    system: options.networkClient ? { networkClient: options.networkClient } : {},
  });
}

/** The AAD error and description without MSAL's framing (timestamps, trace ids stay in the description). */
function describe(err: unknown): string {
  if (!(err instanceof AuthError)) return err instanceof Error ? err.message : String(err);
  const text = /Description: ([\s\S]*?) - Correlation ID:/.exec(err.errorMessage)?.[1] ?? err.errorMessage;
  return `${err.errorCode}: ${text.replace(/\s+/g, ' ').trim()}`;
}

function redact(text: string, secrets: Array<string | undefined>): string {
  let out = text;
  for (const s of secrets) if (s) out = out.split(s).join('[redacted]');
  return out.replace(JWT, '[redacted token]');
}

function hint(codes: string[], upstream: string): string {
  const has = (...c: string[]) => c.some((x) => codes.includes(`AADSTS${x}`));
  if (has('7000215', '7000222', '7000218', '700016'))
    return `Check client_id and the client secret (client_secret_env) in the auth block of upstream "${upstream}".`;
  if (has('65001')) return "Grant the router's app registration consent to the upstream's API.";
  if (has('50013', '500133')) return "The caller's token was refused as an on-behalf-of assertion; sign in again.";
  return "Retry later; if it keeps failing, check the auth settings of this upstream and the router's API permissions.";
}
