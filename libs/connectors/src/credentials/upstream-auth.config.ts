import { z } from 'zod';
import { boolish } from '@stoa/config';

const DEFAULT_AUTHORITY = 'https://login.microsoftonline.com';
const DEFAULT_SECRET_ENV = 'UPSTREAM_CLIENT_SECRET';
/** Multi-tenant aliases: OBO and client credentials need the router's own tenant. */
const TENANT_ALIASES = new Set(['common', 'organizations', 'consumers']);

/** How the router authenticates to one upstream (`caller` = no mode written: the caller's own identity). */
export const UpstreamAuthMode = {
  caller: 'caller',
  passthrough: 'passthrough',
  obo: 'obo',
  clientCredentials: 'client_credentials',
  none: 'none',
} as const;
export type UpstreamAuthMode = (typeof UpstreamAuthMode)[keyof typeof UpstreamAuthMode];

const rawSchema = z
  .object({
    /** Unset: the caller's identity (passthrough to the connector's own audience, else on-behalf-of). */
    mode: z.enum(['passthrough', 'obo', 'client_credentials', 'none']).optional(),
    /** What tokens for the upstream carry as `aud`: its app id URI (`api://…`) or client id. */
    audience: z.string().min(1).optional(),
    /** Scopes requested for the upstream; default `{audience}/.default`. */
    scopes: z.array(z.string().min(1)).min(1).optional(),
    /** The router's app registration (obo, client_credentials). */
    tenant_id: z.string().min(1).optional(),
    client_id: z.string().min(1).optional(),
    /** Prefer `client_secret_env`: secrets in YAML end up in backups and diffs. */
    client_secret: z.string().min(1).optional(),
    /** Environment variable holding the client secret; default UPSTREAM_CLIENT_SECRET. */
    client_secret_env: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name')
      .optional(),
    /** Authority host (sovereign clouds, tests); default login.microsoftonline.com (the connector's own when mode is unset). */
    authority: z.url({ protocol: /^https$/ }).optional(),
    /** `none` / `client_credentials` make every caller one upstream principal: beside Entra auth only with this set. */
    shared_identity_acknowledged: boolish.default(false),
  })
  .strict();
type RawUpstreamAuth = z.output<typeof rawSchema>;

/** No token: every caller is the same anonymous principal upstream. */
export interface NoAuth {
  mode: 'none';
  sharedIdentityAcknowledged?: true;
}
/** Passthrough forwards the caller's token; only allowed when the upstream is one of our own audiences (unset = ours). */
export interface PassthroughAuth {
  mode: 'passthrough';
  audience?: string;
}
/** The router's confidential client gets its own token for the upstream (Entra OBO or client credentials). */
export interface ConfidentialAuth {
  mode: 'obo' | 'client_credentials';
  audience: string;
  scopes: string[];
  tenantId: string;
  clientId: string;
  clientSecret: string;
  authority: string;
  sharedIdentityAcknowledged?: true;
}
/**
 * No `mode` written (the seed docs' configs): the caller's own identity reaches the upstream — passthrough when
 * the upstream shares the connector's audience (or the connector runs no-op auth), on-behalf-of when `audience`
 * names another one. Resolved against the connector by `resolveUpstreamAuth`.
 */
export interface CallerAuth {
  mode: 'caller';
  audience?: string;
  /** The block as written (no mode), for on-behalf-of defaults. */
  block: RawUpstreamAuth;
}
/** The parsed `auth:` block of one upstream. */
export type UpstreamAuthConfig = NoAuth | PassthroughAuth | ConfidentialAuth | CallerAuth;
/** An `auth:` block with the connector's defaults applied: what the credentials run. */
export type ResolvedUpstreamAuth = Exclude<UpstreamAuthConfig, CallerAuth>;

/**
 * `auth:` of one upstream in YAML. The client secret is read here, once, from `client_secret` or the
 * environment variable named by `client_secret_env`.
 */
export const upstreamAuthSchema = rawSchema.prefault({}).transform((a, ctx): UpstreamAuthConfig => {
  const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message, input: a });
  const ack = a.shared_identity_acknowledged ? { sharedIdentityAcknowledged: true as const } : {};
  if (!a.mode) {
    return { mode: 'caller', ...(a.audience ? { audience: a.audience } : {}), block: a };
  }
  if (a.mode === 'none') return { mode: 'none', ...ack };
  if (a.mode === 'passthrough') return { mode: 'passthrough', ...(a.audience ? { audience: a.audience } : {}) };
  if (!a.audience)
    issue(
      'audience',
      `required when mode is ${a.mode}: the upstream's app id URI or client id (the \`aud\` its tokens must carry)`,
    );

  for (const key of ['tenant_id', 'client_id'] as const) {
    if (!a[key])
      issue(
        key,
        `required when mode is ${a.mode}: the ${key === 'tenant_id' ? 'tenant' : 'application (client) id'} of the router's own app registration`,
      );
  }
  if (a.tenant_id && TENANT_ALIASES.has(a.tenant_id.toLowerCase())) {
    issue(
      'tenant_id',
      `must be the router's tenant id or domain, not '${a.tenant_id}': ${a.mode} tokens are issued by a specific tenant`,
    );
  }
  if (a.client_secret && a.client_secret_env)
    issue('client_secret', 'set either client_secret or client_secret_env, not both');
  const secretEnv = a.client_secret_env ?? DEFAULT_SECRET_ENV;
  const secret = a.client_secret ?? readEnv(secretEnv);
  if (!secret) {
    issue(
      'client_secret',
      `required when mode is ${a.mode}: set the environment variable ${secretEnv} (or name another one with client_secret_env, or set client_secret)`,
    );
  }
  const scopes = a.scopes ?? (a.audience ? [`${a.audience.replace(/\/+$/, '')}/.default`] : []);
  if (a.mode === 'client_credentials' && scopes.some((s) => !s.endsWith('/.default'))) {
    issue(
      'scopes',
      'client_credentials needs `{audience}/.default` scopes: app tokens carry app roles, not delegated scopes',
    );
  }
  if (!a.audience || !a.tenant_id || !a.client_id || !secret || ctx.issues.length) return z.NEVER;
  return {
    mode: a.mode,
    audience: a.audience,
    scopes,
    tenantId: a.tenant_id,
    clientId: a.client_id,
    clientSecret: secret,
    authority: (a.authority ?? DEFAULT_AUTHORITY).replace(/\/+$/, ''),
    ...(a.mode === 'client_credentials' ? ack : {}),
  };
});

function readEnv(name: string): string | undefined {
  const value = process.env[name];
  return value ? value : undefined;
}
