import { randomBytes, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { errors, jwtVerify, SignJWT } from 'jose';
import { ForbiddenError, isLoopback, PrincipalResolver, UnauthenticatedError } from '@stoa/auth';
import type { Principal } from '@stoa/core';
import type { FeedReader } from '@stoa/activity';
import type { ActivityConfig } from './activity.config';
import { ACTIVITY_CONFIG } from './activity.tokens';

/** The cookie the dashboard's stream requests carry (HttpOnly: page scripts never see it). */
export const STREAM_COOKIE = 'activity_stream_token';
const PURPOSE = 'stream';

/**
 * Who may write and read the activity feed. Writers: an Entra token with the writer role, or in no-op mode a
 * loopback caller with the shared secret. Readers: a short-lived HS256 stream token (cookie, or `?token=`) minted
 * for an authenticated principal; it says whether its holder sees everyone's sessions (admin role).
 */
@Injectable()
export class ActivityAuth {
  private readonly secret: Uint8Array;

  constructor(
    @Inject(ACTIVITY_CONFIG) private readonly config: ActivityConfig,
    private readonly principals: PrincipalResolver,
  ) {
    const s = config.stream.token_secret;
    this.secret = s ? new TextEncoder().encode(s) : randomBytes(32);
  }

  /** Refuses a writer that is not allowed to post events. */
  async checkWriter(req: Request): Promise<void> {
    const bearer = bearerOf(req);
    const { writer_role, writer_secret } = this.config.ingest;
    if (this.config.auth.mode === 'entra') {
      if (!bearer)
        throw new UnauthenticatedError(
          `Missing bearer token. Writers send an Entra ID token for this app carrying the '${writer_role}' app role (set ACTIVITY_UI_AUDIENCE on the publishing app).`,
          false,
        );
      const principal = await this.principals.tryResolve(`Bearer ${bearer}`);
      if (!principal)
        throw new UnauthenticatedError('The bearer token is not a valid Entra ID token for this app.', true);
      if (!principal.roles.includes(writer_role))
        throw new ForbiddenError(
          `Missing required role: ${writer_role}. Assign the app role to the publishing app's identity.`,
        );
      return;
    }
    if (!isLoopback(req.socket.remoteAddress?.replace(/^::ffff:/, '') ?? ''))
      throw new ForbiddenError(
        'In no-op auth mode only loopback callers may post events. Configure Entra ID auth to accept events from other hosts.',
      );
    if (!bearer)
      throw new UnauthenticatedError(
        'Missing bearer token. In no-op mode writers send the shared secret (ACTIVITY_UI_SECRET) as "Authorization: Bearer <secret>".',
        false,
      );
    if (!writer_secret || !sameSecret(bearer, writer_secret))
      throw new UnauthenticatedError(
        "The bearer token is not this app's writer secret. Set the same ACTIVITY_UI_SECRET on the activity app and the publishing app.",
        true,
      );
  }

  /** A stream token for `principal`; `admin` also when its token carries the admin role. */
  async mint(principal: Principal, admin: boolean): Promise<{ token: string; ttl: number; admin: boolean }> {
    const ttl = this.config.stream.token_ttl_seconds;
    const adm = admin || (this.config.auth.mode === 'entra' && principal.roles.includes(this.config.auth.admin_role));
    const token = await new SignJWT({ purpose: PURPOSE, adm })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(principal.id)
      .setIssuedAt()
      .setExpirationTime(`${ttl}s`)
      .sign(this.secret);
    return { token, ttl, admin: adm };
  }

  /** The reader of a stream request and when its token expires, or the 401/403 saying why not. */
  async reader(req: Request): Promise<FeedReader & { expiresAt: number }> {
    const q = req.query.token;
    const token = cookie(req, STREAM_COOKIE) ?? (typeof q === 'string' ? q : undefined);
    if (!token)
      throw new UnauthenticatedError('Missing stream token: POST /stream-token first (the dashboard does).', false);
    try {
      const { payload } = await jwtVerify(token, this.secret, { algorithms: ['HS256'] });
      if (payload.purpose !== PURPOSE) throw new ForbiddenError('Token not valid for stream access.');
      return { sub: String(payload.sub), admin: payload.adm === true, expiresAt: (payload.exp ?? 0) * 1000 };
    } catch (err) {
      if (err instanceof ForbiddenError) throw err;
      if (err instanceof errors.JWTExpired)
        throw new UnauthenticatedError('Stream token expired: POST /stream-token for a new one.', true);
      throw new UnauthenticatedError(`Invalid stream token: ${(err as Error).message}.`, true);
    }
  }
}

function bearerOf(req: Request): string | undefined {
  const m = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '');
  return m?.[1]?.trim() || undefined;
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** One cookie's value from the Cookie header. */
function cookie(req: Request, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return decodeURIComponent(part.slice(eq + 1).trim());
  }
  return undefined;
}
