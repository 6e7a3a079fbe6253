import { type DynamicModule, Logger, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { PassportModule } from '@nestjs/passport';
import { resolve } from 'node:path';
import { noopAdminToken } from './admin-token';
import { entraSettings, type AuthConfig } from './auth.config';
import { EntraTokenVerifier } from './entra-verifier';
import { ENTRA_VERIFIER, EntraStrategy } from './entra.strategy';
import { HttpErrorFilter } from './http-error.filter';
import { AUTH_SETTINGS, EntraAuthGuard, PrincipalGuard } from './principal.guard';
import { PrincipalResolver } from './principal-resolver.service';
import { PROTECTED_RESOURCE_SETTINGS } from './protected-resource';
import { WellKnownController } from './well-known.controller';
import { CUSTOM_PRINCIPAL_RESOLVER, type CustomPrincipalResolver } from './custom-principal';

export interface AuthModuleOptions {
  auth: AuthConfig;
  publicBaseUrl?: string;
  /** Where a no-op server writes its random admin token unless `auth.admin_token_file` says otherwise. */
  adminTokenFile: string;
  /** An embedding's own identity source, asked before Entra / no-op. */
  principalResolver?: CustomPrincipalResolver;
}

/** Global auth for an app: principal guard (Entra or no-op), admin role, RFC 9728 discovery, HTTP error shape. */
@Module({})
export class AuthModule {
  static forRoot(opts: AuthModuleOptions): DynamicModule {
    const { auth } = opts;
    const admin =
      auth.mode === 'noop'
        ? noopAdminToken(auth.admin_token, resolve(auth.admin_token_file ?? opts.adminTokenFile))
        : undefined;
    return {
      module: AuthModule,
      global: true,
      imports: [PassportModule],
      controllers: [WellKnownController],
      providers: [
        {
          provide: AUTH_SETTINGS,
          useValue: {
            mode: auth.mode,
            adminRole: auth.admin_role,
            adminToken: admin?.token,
            adminTokenFile: admin?.file,
          },
        },
        { provide: PROTECTED_RESOURCE_SETTINGS, useValue: { auth, publicBaseUrl: opts.publicBaseUrl } },
        {
          provide: ENTRA_VERIFIER,
          useValue: auth.mode === 'entra' ? new EntraTokenVerifier(entraSettings(auth)) : undefined,
        },
        ...(opts.principalResolver ? [{ provide: CUSTOM_PRINCIPAL_RESOLVER, useValue: opts.principalResolver }] : []),
        EntraStrategy,
        EntraAuthGuard,
        PrincipalResolver,
        { provide: APP_GUARD, useClass: PrincipalGuard },
        { provide: APP_FILTER, useClass: HttpErrorFilter },
        {
          // A provider, so the warning goes through the app's structured logger.
          provide: 'STOA_AUTH_MODE_NOTICE',
          useFactory: () => {
            if (auth.mode !== 'noop') return auth.mode;
            const where = admin?.file
              ? `the token in ${admin.file} (readable only by this user)`
              : 'the configured auth.admin_token (STOA_ADMIN_TOKEN)';
            new Logger('Auth').warn(
              { adminTokenFile: admin?.file },
              `AUTHENTICATION IS OFF (no-op development mode): callers are NOT verified and choose their own identity. The admin API (/admin/v1) needs the header X-Stoa-Admin-Token: ${where}.`,
            );
            return auth.mode;
          },
        },
      ],
      exports: [AUTH_SETTINGS, PrincipalResolver],
    };
  }
}
