import { Inject, Injectable, Optional } from '@nestjs/common';
import type { Principal } from '@stoa/core';
import type { EntraTokenVerifier } from './entra-verifier';
import { ENTRA_VERIFIER } from './entra.strategy';
import { noopPrincipal } from './noop-auth';
import { AUTH_SETTINGS, type AuthSettings } from './principal.guard';

/**
 * The principal of a request outside Nest's guard chain (a connector's hot path): undefined whenever it cannot
 * be established, so the caller falls back to the guarded route, which answers with the proper 401 challenge.
 */
@Injectable()
export class PrincipalResolver {
  constructor(
    @Inject(AUTH_SETTINGS) private readonly settings: AuthSettings,
    @Optional() @Inject(ENTRA_VERIFIER) private readonly verifier?: EntraTokenVerifier,
  ) {}

  async tryResolve(authorization: string | undefined): Promise<Principal | undefined> {
    if (this.settings.mode === 'noop') return noopPrincipal(authorization);
    const token = authorization?.startsWith('Bearer ') ? authorization.slice(7).trim() : undefined;
    if (!token || !this.verifier) return undefined;
    return this.verifier.verify(token).catch(() => undefined);
  }
}
