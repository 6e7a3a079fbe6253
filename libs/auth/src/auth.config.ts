import { z } from 'zod';
import { nonNegative } from '@stoa/config';

const DEFAULT_AUTHORITY = 'https://login.microsoftonline.com';

/** passport-azure-ad spellings accepted as aliases of our snake_case keys. */
const ALIASES: Record<string, string> = { clientID: 'client_id', tenantID: 'tenant_id' };

/** Keys that only mean something for Entra ID (a no-op config naming one contradicts itself). */
const ENTRA_KEYS = ['client_id', 'tenant_id', 'identityMetadata', 'audience', 'issuer'] as const;
const ENTRA_KEY_ENV = { client_id: 'ENTRA_CLIENT_ID', tenant_id: 'ENTRA_TENANT_ID' } as const;

/** `mode` as written, else Entra as soon as a client or tenant id is known (a half-set Entra config is refused, never run open). */
function inferredMode(a: { mode?: 'noop' | 'entra'; client_id?: string; tenant_id?: string }): 'noop' | 'entra' {
  return a.mode ?? (a.client_id || a.tenant_id ? 'entra' : 'noop');
}

/**
 * `auth:` in any app's YAML. Entra when a client or tenant id is known (YAML or ENTRA_*), else no-op dev auth;
 * an explicit `mode: noop` beside Entra settings is refused.
 */
export const authConfigSchema = z
  .preprocess(
    (raw) => {
      if (!raw || typeof raw !== 'object') return raw;
      const out: Record<string, unknown> = { ...(raw as Record<string, unknown>) };
      for (const [alias, key] of Object.entries(ALIASES)) {
        if (alias in out) {
          out[key] ??= out[alias];
          delete out[alias];
        }
      }
      return out;
    },
    z
      .object({
        mode: z.enum(['noop', 'entra']).optional().meta({ env: 'STOA_AUTH_MODE' }),
        tenant_id: z.string().optional().meta({ env: ENTRA_KEY_ENV.tenant_id }),
        client_id: z.string().optional().meta({ env: ENTRA_KEY_ENV.client_id }),
        /** Authority host override (sovereign clouds, tests); ENTRA_AUTHORITY. */
        authority: z.url().default(DEFAULT_AUTHORITY).meta({ env: 'ENTRA_AUTHORITY' }),
        /** Tenant OIDC metadata URL; default `{authority}/{tenant}/v2.0/.well-known/openid-configuration`. */
        identityMetadata: z.url().optional(),
        /** Accepted `aud` values; default `[clientID, api://clientID]`. */
        audience: z.array(z.string()).optional(),
        /** Accepted `iss` values; default the tenant's v2 issuer and the v1 `https://sts.windows.net/{tid}/`. */
        issuer: z.array(z.string()).optional(),
        validateIssuer: z.boolean().default(true),
        /** Seconds of clock skew tolerated on exp/nbf. */
        clockSkew: nonNegative.default(300),
        /** After a key refetch, unknown `kid`s do not trigger another one for this long (rate limit). */
        jwks_refetch_cooldown_seconds: nonNegative.default(30),
        /** Keys are refetched when older than this. */
        jwks_cache_max_age_seconds: nonNegative.default(600),
        /** RFC 9728 `resource`; default `api://{clientID}`. */
        resource: z.string().optional(),
        scopes_supported: z.array(z.string()).optional(),
        /** App role that grants /admin/v1. */
        admin_role: z.string().default('Stoa.Admin'),
        /**
         * No-op mode: the token /admin/v1 requires (header `X-Stoa-Admin-Token`, or `Authorization: Bearer`), because
         * loopback is no identity (a kernel or another local user is loopback too). Default: a random one per start,
         * written to `admin_token_file` (mode 0600) and the path logged. STOA_ADMIN_TOKEN.
         */
        admin_token: z.string().min(24, 'use at least 24 characters').optional().meta({ env: 'STOA_ADMIN_TOKEN' }),
        /** Where a no-op server writes its admin token; default `{data dir}/{app}-{port}.admin-token`. STOA_ADMIN_TOKEN_FILE. */
        admin_token_file: z.string().optional().meta({ env: 'STOA_ADMIN_TOKEN_FILE' }),
      })
      .strict(),
  )
  .prefault({})
  .superRefine((a, ctx) => {
    const mode = inferredMode(a);
    if (mode === 'entra') {
      for (const key of ['client_id', 'tenant_id'] as const) {
        if (!a[key])
          ctx.addIssue({
            code: 'custom',
            path: [key],
            message: `required for Entra ID auth (or set ENTRA_${key.toUpperCase()})`,
          });
      }
      return;
    }
    // An explicit no-op beside Entra settings: the operator believes auth is on, but nothing would be verified.
    for (const key of ENTRA_KEYS) {
      if (a[key] === undefined || a[key] === '') continue;
      const env = (ENTRA_KEY_ENV as Partial<Record<string, string>>)[key];
      ctx.addIssue({
        code: 'custom',
        path: [key],
        message:
          `is an Entra ID setting, but auth.mode is 'noop' (YAML auth.mode or STOA_AUTH_MODE), which verifies no token: the server would run unauthenticated. ` +
          `To authenticate with Entra ID set auth.mode: entra (or STOA_AUTH_MODE=entra); for no-op development auth remove auth.${key}${env ? ` and unset ${env}` : ''}.`,
      });
    }
  })
  .transform((a) => ({ ...a, mode: inferredMode(a) }));
export type AuthConfig = z.output<typeof authConfigSchema>;

/** Entra settings with every default resolved. */
export interface EntraSettings {
  tenantId: string;
  clientId: string;
  metadataUrl: string;
  audiences: string[];
  issuers: string[] | undefined;
  clockSkewS: number;
  cooldownMs: number;
  cacheMaxAgeMs: number;
}

/** Resolves Entra defaults (audiences, issuers, metadata URL) from an `auth:` block in entra mode. */
export function entraSettings(a: AuthConfig): EntraSettings {
  const tenant = a.tenant_id as string;
  const client = a.client_id as string;
  const authority = a.authority.replace(/\/+$/, '');
  return {
    tenantId: tenant,
    clientId: client,
    metadataUrl: a.identityMetadata ?? `${authority}/${tenant}/v2.0/.well-known/openid-configuration`,
    audiences: a.audience ?? [client, `api://${client}`],
    issuers: a.validateIssuer
      ? (a.issuer ?? [`${authority}/${tenant}/v2.0`, `https://sts.windows.net/${tenant}/`])
      : undefined,
    clockSkewS: a.clockSkew,
    cooldownMs: a.jwks_refetch_cooldown_seconds * 1000,
    cacheMaxAgeMs: a.jwks_cache_max_age_seconds * 1000,
  };
}
