import { Inject, Injectable, Optional } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { Request } from 'express';
import { Strategy } from 'passport-strategy';
import type { Principal } from '@stoa/core';
import { UnauthenticatedError } from './auth.errors';
import { EntraTokenVerifier } from './entra-verifier';

type Verify = (token: string, done: (err: unknown, user?: Principal | false) => void) => void;

/** Why authentication failed, handed from the strategy to the guard. */
export interface AuthFailure {
  message: string;
  tokenSent: boolean;
}

/** Passport strategy reading a bearer token from the Authorization header only (never query or body). */
class HeaderBearerStrategy extends Strategy {
  constructor(private readonly verifyToken: Verify) {
    super();
  }

  override authenticate(req: Request): void {
    const header = req.headers.authorization;
    const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (!match?.[1]) {
      const failure: AuthFailure = {
        message: header
          ? 'Authorization header is not a Bearer token. Send "Authorization: Bearer <Entra ID access token>".'
          : 'Missing Authorization header. Send "Authorization: Bearer <Entra ID access token>".',
        tokenSent: Boolean(header),
      };
      return this.fail(failure, 401);
    }
    this.verifyToken(match[1], (err, user) => {
      if (err instanceof UnauthenticatedError)
        return this.fail({ message: err.message, tokenSent: true } satisfies AuthFailure, 401);
      if (err) return this.error(err as Error);
      if (!user) return this.fail({ message: 'Token rejected.', tokenSent: true } satisfies AuthFailure, 401);
      this.success(user);
    });
  }
}

export const ENTRA_VERIFIER = Symbol('ENTRA_VERIFIER');

/** The `entra` passport strategy: validates with {@link EntraTokenVerifier}. */
@Injectable()
export class EntraStrategy extends PassportStrategy(HeaderBearerStrategy, 'entra') {
  constructor(@Optional() @Inject(ENTRA_VERIFIER) private readonly verifier?: EntraTokenVerifier) {
    super();
  }

  validate(token: string): Promise<Principal> {
    if (!this.verifier) throw new Error('Entra strategy used without a verifier');
    return this.verifier.verify(token);
  }
}
