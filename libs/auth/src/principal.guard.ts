import { type CanActivate, type ExecutionContext, Inject, Injectable, Optional } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import type { Request } from 'express';
import type { Principal } from '@stoa/core';
import { ForbiddenError, UnauthenticatedError } from './auth.errors';
import { isLoopback } from './bind';
import { IS_ADMIN, IS_PUBLIC } from './decorators';
import type { AuthFailure } from './entra.strategy';
import { noopPrincipal } from './noop-auth';
import { CUSTOM_PRINCIPAL_RESOLVER, type CustomPrincipalResolver, customPrincipal } from './custom-principal';
import { tokenMatches } from './admin-token';

export interface AuthSettings {
  mode: 'noop' | 'entra';
  adminRole: string;
  /** No-op mode: the token /admin/v1 requires. */
  adminToken?: string;
  /** Where it was written, for the refusal message. */
  adminTokenFile?: string;
}
export const AUTH_SETTINGS = Symbol('AUTH_SETTINGS');

type PrincipalRequest = Request & { principal?: Principal; user?: unknown };

/** Passport's guard for the `entra` strategy, mapping failures to our errors (401 with challenge, 503 when the IdP is down). */
@Injectable()
export class EntraAuthGuard extends AuthGuard('entra') {
  override handleRequest<T>(err: unknown, user: T, info: unknown): T {
    if (err) throw err instanceof Error ? err : new Error('authentication failed', { cause: err });
    if (!user) {
      const failure = info as Partial<AuthFailure> | undefined;
      throw new UnauthenticatedError(failure?.message ?? 'Authentication required.', failure?.tokenSent ?? false);
    }
    return user;
  }
}

/**
 * Global guard: every non-public route gets a principal (Entra or no-op), and admin routes need the
 * admin app role — or, with no-op auth, a loopback caller.
 */
@Injectable()
export class PrincipalGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly entra: EntraAuthGuard,
    @Inject(AUTH_SETTINGS) private readonly settings: AuthSettings,
    @Optional() @Inject(CUSTOM_PRINCIPAL_RESOLVER) private readonly custom?: CustomPrincipalResolver,
  ) {}

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    const targets = [ctx.getHandler(), ctx.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets)) return true;
    const req = ctx.switchToHttp().getRequest<PrincipalRequest>();
    const custom = this.custom && (await customPrincipal(this.custom, req));
    if (custom) {
      req.principal = custom;
    } else if (this.settings.mode === 'noop') {
      req.principal = noopPrincipal(req.headers.authorization);
    } else {
      await this.entra.canActivate(ctx);
      req.principal = req.user as Principal;
    }
    if (this.reflector.getAllAndOverride<boolean>(IS_ADMIN, targets)) this.checkAdmin(req, req.principal);
    return true;
  }

  private checkAdmin(req: PrincipalRequest, principal: Principal): void {
    if (this.settings.mode === 'noop') {
      if (!isLoopback(req.socket.remoteAddress?.replace(/^::ffff:/, '') ?? '')) {
        throw new ForbiddenError(
          'The admin API is only available from loopback while authentication is in no-op mode. Configure Entra ID auth to administer this server remotely.',
        );
      }
      if (!tokenMatches(presentedAdminToken(req), this.settings.adminToken ?? '')) {
        const where = this.settings.adminTokenFile
          ? `the token the server wrote to ${this.settings.adminTokenFile} at start`
          : 'the configured auth.admin_token (STOA_ADMIN_TOKEN)';
        throw new ForbiddenError(
          `In no-op auth mode the admin API needs the header X-Stoa-Admin-Token: ${where}. Loopback alone is no identity: kernels and other local users are loopback too.`,
        );
      }
      return;
    }
    if (!principal.roles.includes(this.settings.adminRole)) {
      throw new ForbiddenError(
        `This endpoint needs the '${this.settings.adminRole}' app role, which your token does not carry. Ask an Entra administrator to assign it.`,
      );
    }
  }
}

/** `X-Stoa-Admin-Token`, else a bearer token (dashboards and Swagger send that). */
function presentedAdminToken(req: PrincipalRequest): string | undefined {
  const header = req.headers['x-stoa-admin-token'];
  if (typeof header === 'string') return header.trim();
  const m = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '');
  return m?.[1]?.trim();
}
