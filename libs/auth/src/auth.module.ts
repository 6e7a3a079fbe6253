import { type DynamicModule, Logger, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { PassportModule } from '@nestjs/passport';
import { entraSettings, type AuthConfig } from './auth.config';
import { EntraTokenVerifier } from './entra-verifier';
import { ENTRA_VERIFIER, EntraStrategy } from './entra.strategy';
import { HttpErrorFilter } from './http-error.filter';
import { AUTH_SETTINGS, EntraAuthGuard, PrincipalGuard } from './principal.guard';
import { PrincipalResolver } from './principal-resolver';
import { PROTECTED_RESOURCE_SETTINGS } from './protected-resource';
import { WellKnownController } from './well-known.controller';

export interface AuthModuleOptions {
  auth: AuthConfig;
  publicBaseUrl?: string;
}

/** Global auth for an app: principal guard (Entra or no-op), admin role, RFC 9728 discovery, HTTP error shape. */
@Module({})
export class AuthModule {
  static forRoot(opts: AuthModuleOptions): DynamicModule {
    const { auth } = opts;
    return {
      module: AuthModule,
      global: true,
      imports: [PassportModule],
      controllers: [WellKnownController],
      providers: [
        { provide: AUTH_SETTINGS, useValue: { mode: auth.mode, adminRole: auth.admin_role } },
        { provide: PROTECTED_RESOURCE_SETTINGS, useValue: { auth, publicBaseUrl: opts.publicBaseUrl } },
        { provide: ENTRA_VERIFIER, useValue: auth.mode === 'entra' ? new EntraTokenVerifier(entraSettings(auth)) : undefined },
        EntraStrategy,
        EntraAuthGuard,
        PrincipalResolver,
        { provide: APP_GUARD, useClass: PrincipalGuard },
        { provide: APP_FILTER, useClass: HttpErrorFilter },
        {
          // A provider, so the warning goes through the app's structured logger.
          provide: 'STOA_AUTH_MODE_NOTICE',
          useFactory: () => {
            if (auth.mode === 'noop') new Logger('Auth').warn('AUTHENTICATION IS OFF (no-op development mode): callers are NOT verified and choose their own identity.');
            return auth.mode;
          },
        },
      ],
      exports: [AUTH_SETTINGS, PrincipalResolver],
    };
  }
}
