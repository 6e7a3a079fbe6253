import { Logger } from '@nestjs/common';
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, errors, jwtVerify, type JWTPayload } from 'jose';
import { UnavailableError, type Principal } from '@stoa/core';
import type { EntraSettings } from './auth.config';
import { UnauthenticatedError } from './auth.errors';

type Jwks = ReturnType<typeof createRemoteJWKSet>;

const MAX_CACHED_TOKENS = 10_000;

/**
 * Validates Entra ID access tokens: RS256 only, audience, issuer (v1 and v2), expiry with clock skew,
 * keys from the tenant's OIDC metadata (refetched on an unknown `kid`, rate-limited). An unreachable
 * identity provider is a 503, never a 401.
 */
export class EntraTokenVerifier {
  private readonly logger = new Logger(EntraTokenVerifier.name);
  private jwks: Promise<Jwks> | undefined;

  constructor(private readonly s: EntraSettings) {}

  /** Verified tokens until their expiry (bounded, insertion-ordered): a repeat call costs a map lookup. */
  private readonly verified = new Map<string, { principal: Principal; expiresAt: number }>();

  async verify(token: string): Promise<Principal> {
    const hit = this.verified.get(token);
    if (hit && hit.expiresAt > Date.now()) return hit.principal;
    if (hit) this.verified.delete(token);
    const principal = await this.verifyUncached(token);
    this.remember(token, principal);
    return principal;
  }

  private remember(token: string, principal: Principal): void {
    const exp = (decodeJwt(token).exp ?? 0) * 1000 + this.s.clockSkewS * 1000;
    if (exp <= Date.now()) return;
    if (this.verified.size >= MAX_CACHED_TOKENS) this.verified.delete(this.verified.keys().next().value as string);
    this.verified.set(token, { principal, expiresAt: exp });
  }

  private async verifyUncached(token: string): Promise<Principal> {
    let alg: string | undefined;
    try {
      alg = decodeProtectedHeader(token).alg;
    } catch {
      throw new UnauthenticatedError(
        'Token is not a valid JWT. Send an Entra ID access token as "Authorization: Bearer <token>".',
        true,
      );
    }
    if (alg !== 'RS256')
      throw new UnauthenticatedError(
        `Token algorithm '${String(alg)}' is not accepted; only RS256-signed Entra ID tokens are.`,
        true,
      );
    const jwks = await this.keys();
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, jwks, {
        algorithms: ['RS256'],
        audience: this.s.audiences,
        issuer: this.s.issuers,
        clockTolerance: this.s.clockSkewS,
        requiredClaims: ['exp'],
      }));
    } catch (err) {
      throw this.translate(err);
    }
    return toPrincipal(payload, token);
  }

  private keys(): Promise<Jwks> {
    this.jwks ??= this.discover().catch((err: unknown) => {
      this.jwks = undefined; // retry discovery on the next request
      throw err;
    });
    return this.jwks;
  }

  private async discover(): Promise<Jwks> {
    let jwksUri: unknown;
    try {
      const res = await fetch(this.s.metadataUrl, { signal: AbortSignal.timeout(5000) });
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      jwksUri = ((await res.json()) as { jwks_uri?: unknown }).jwks_uri;
    } catch (err) {
      throw idpDown(`the OIDC metadata at ${this.s.metadataUrl}`, err);
    }
    if (typeof jwksUri !== 'string')
      throw idpDown(`the OIDC metadata at ${this.s.metadataUrl}`, new Error('no jwks_uri'));
    this.logger.log({ jwksUri }, 'Entra signing keys located');
    return createRemoteJWKSet(new URL(jwksUri), {
      cooldownDuration: this.s.cooldownMs,
      cacheMaxAge: this.s.cacheMaxAgeMs,
      timeoutDuration: 5000,
    });
  }

  private translate(err: unknown): Error {
    if (err instanceof errors.JWTExpired)
      return new UnauthenticatedError('Token is expired. Get a new access token and retry.', true);
    if (err instanceof errors.JWTClaimValidationFailed) {
      if (err.claim === 'aud')
        return new UnauthenticatedError(
          `Token has invalid audience; this server accepts ${this.s.audiences.join(' or ')}.`,
          true,
        );
      if (err.claim === 'iss')
        return new UnauthenticatedError(
          "Token has invalid issuer; it was not issued by this server's Entra tenant.",
          true,
        );
      return new UnauthenticatedError(`Token claim '${err.claim}' is invalid: ${err.message}.`, true);
    }
    if (err instanceof errors.JWKSNoMatchingKey)
      return new UnauthenticatedError(
        'Token is signed with an unknown key (kid). Get a new access token from the tenant.',
        true,
      );
    if (err instanceof errors.JWSSignatureVerificationFailed)
      return new UnauthenticatedError('Token signature is invalid.', true);
    if (err instanceof errors.JWKSTimeout || err instanceof errors.JWKSInvalid || isNetworkError(err))
      return idpDown('the signing keys (JWKS)', err);
    if (err instanceof errors.JOSEError)
      return new UnauthenticatedError(`Token validation failed: ${err.message}.`, true);
    return idpDown('the signing keys (JWKS)', err);
  }
}

function isNetworkError(err: unknown): boolean {
  return (
    err instanceof TypeError ||
    (err instanceof Error && /fetch failed|ECONNREFUSED|ENOTFOUND|ETIMEDOUT|Expected 200/.test(err.message))
  );
}

function idpDown(what: string, err: unknown): UnavailableError {
  const detail = err instanceof Error ? ((err.cause as Error | undefined)?.message ?? err.message) : String(err);
  return new UnavailableError(
    `Cannot reach the identity provider to fetch ${what} (${detail}); the token could not be checked. Retry in a moment.`,
    {},
    { cause: err },
  );
}

function toPrincipal(claims: JWTPayload, token: string): Principal {
  const str = (v: unknown) => (typeof v === 'string' && v ? v : undefined);
  const user = str(claims.oid) ?? str(claims.sub);
  const tenant = str(claims.tid);
  if (!user || !tenant)
    throw new UnauthenticatedError('Token missing required user identity claims (oid or sub, and tid).', true);
  const roles = Array.isArray(claims.roles) ? claims.roles.filter((r): r is string => typeof r === 'string') : [];
  return {
    id: `${user}@${tenant}`,
    name: str(claims.name) ?? str(claims.preferred_username),
    roles,
    scopes: str(claims.scp)?.split(' ') ?? [],
    source: 'entra',
    token,
  };
}
