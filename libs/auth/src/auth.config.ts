import { z } from 'zod';
import { nonNegative } from '@stoa/config';

const DEFAULT_AUTHORITY = 'https://login.microsoftonline.com';

/** passport-azure-ad spellings accepted as aliases of our snake_case keys. */
const ALIASES: Record<string, string> = { clientID: 'client_id', tenantID: 'tenant_id' };

/** `auth:` in any app's YAML. Entra when a client id is known (YAML or ENTRA_CLIENT_ID), else no-op dev auth. */
export const authConfigSchema = z
  .preprocess((raw) => {
    if (!raw || typeof raw !== 'object') return raw;
    const out: Record<string, unknown> = { ...(raw as Record<string, unknown>) };
    for (const [alias, key] of Object.entries(ALIASES)) {
      if (alias in out) {
        out[key] ??= out[alias];
        delete out[alias];
      }
    }
    return out;
  }, z.object({
    mode: z.enum(['noop', 'entra']).optional(),
    tenant_id: z.string().optional(),
    client_id: z.string().optional(),
    /** Authority host override (sovereign clouds, tests); ENTRA_AUTHORITY. */
    authority: z.url().default(DEFAULT_AUTHORITY),
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
    admin_token: z.string().min(24, 'use at least 24 characters').optional(),
    /** Where a no-op server writes its admin token; default `{data dir}/{app}-{port}.admin-token`. STOA_ADMIN_TOKEN_FILE. */
    admin_token_file: z.string().optional(),
  }).strict())
  .prefault({})
  .superRefine((a, ctx) => {
    const mode = a.mode ?? (a.client_id ? 'entra' : 'noop');
    if (mode === 'entra') {
      for (const key of ['client_id', 'tenant_id'] as const) {
        if (!a[key]) ctx.addIssue({ code: 'custom', path: [key], message: `required for Entra ID auth (or set ENTRA_${key.toUpperCase()})` });
      }
    }
  })
  .transform((a) => ({ ...a, mode: a.mode ?? (a.client_id ? ('entra' as const) : ('noop' as const)) }));
export type AuthConfig = z.output<typeof authConfigSchema>;

/** Env overrides for {@link authConfigSchema}. */
export const AUTH_ENV = {
  STOA_AUTH_MODE: 'auth.mode',
  ENTRA_CLIENT_ID: 'auth.client_id',
  ENTRA_TENANT_ID: 'auth.tenant_id',
  ENTRA_AUTHORITY: 'auth.authority',
  STOA_ADMIN_TOKEN: 'auth.admin_token',
  STOA_ADMIN_TOKEN_FILE: 'auth.admin_token_file',
} as const;

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
    issuers: a.validateIssuer ? (a.issuer ?? [`${authority}/${tenant}/v2.0`, `https://sts.windows.net/${tenant}/`]) : undefined,
    clockSkewS: a.clockSkew,
    cooldownMs: a.jwks_refetch_cooldown_seconds * 1000,
    cacheMaxAgeMs: a.jwks_cache_max_age_seconds * 1000,
  };
}
