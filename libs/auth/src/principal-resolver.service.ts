import type { IncomingMessage } from 'node:http';
import { Inject, Injectable, Optional } from '@nestjs/common';
import type { Principal } from '@stoa/core';
import type { EntraTokenVerifier } from './entra-verifier';
import { ENTRA_VERIFIER } from './entra.strategy';
import { CUSTOM_PRINCIPAL_RESOLVER, type CustomPrincipalResolver, customPrincipal } from './custom-principal';
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
    @Optional() @Inject(CUSTOM_PRINCIPAL_RESOLVER) private readonly custom?: CustomPrincipalResolver,
  ) {}

  /** `req` lets a custom resolver answer first; without it (or when it fails) a custom setup takes the guarded route. */
  async tryResolve(authorization: string | undefined, req?: IncomingMessage): Promise<Principal | undefined> {
    if (this.custom) {
      if (!req) return undefined;
      const custom = await customPrincipal(this.custom, req).catch(() => null);
      if (custom === null) return undefined;
      if (custom) return custom;
    }
    if (this.settings.mode === 'noop') return noopPrincipal(authorization);
    const token = authorization?.startsWith('Bearer ') ? authorization.slice(7).trim() : undefined;
    if (!token || !this.verifier) return undefined;
    return this.verifier.verify(token).catch(() => undefined);
  }
}
