import { z } from 'zod';

const DEFAULT_AUTHORITY = 'https://login.microsoftonline.com';
const DEFAULT_SECRET_ENV = 'UPSTREAM_CLIENT_SECRET';
/** Multi-tenant aliases: OBO and client credentials need the router's own tenant. */
const TENANT_ALIASES = new Set(['common', 'organizations', 'consumers']);

/** How the router authenticates to one upstream. */
export const UpstreamAuthMode = {
  passthrough: 'passthrough',
  obo: 'obo',
  clientCredentials: 'client_credentials',
  none: 'none',
} as const;
export type UpstreamAuthMode = (typeof UpstreamAuthMode)[keyof typeof UpstreamAuthMode];

const rawSchema = z
  .object({
    mode: z.enum(['passthrough', 'obo', 'client_credentials', 'none']).default('none'),
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
    client_secret_env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name').optional(),
    /** Authority host (sovereign clouds, tests). */
    authority: z.url({ protocol: /^https$/ }).default(DEFAULT_AUTHORITY),
  })
  .strict();

/** Passthrough forwards the caller's token; only allowed when the upstream is one of our own audiences. */
export interface PassthroughAuth {
  mode: 'passthrough';
  audience: string;
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
}
/** The parsed `auth:` block of one upstream. */
export type UpstreamAuthConfig = { mode: 'none' } | PassthroughAuth | ConfidentialAuth;

/**
 * `auth:` of one upstream in YAML. The client secret is read here, once, from `client_secret` or the
 * environment variable named by `client_secret_env`.
 */
export const upstreamAuthSchema = rawSchema.prefault({}).transform((a, ctx): UpstreamAuthConfig => {
  const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message, input: a });
  if (a.mode === 'none') return { mode: 'none' };
  if (!a.audience) issue('audience', `required when mode is ${a.mode}: the upstream's app id URI or client id (the \`aud\` its tokens must carry)`);
  if (a.mode === 'passthrough') return a.audience ? { mode: 'passthrough', audience: a.audience } : z.NEVER;

  for (const key of ['tenant_id', 'client_id'] as const) {
    if (!a[key]) issue(key, `required when mode is ${a.mode}: the ${key === 'tenant_id' ? 'tenant' : 'application (client) id'} of the router's own app registration`);
  }
  if (a.tenant_id && TENANT_ALIASES.has(a.tenant_id.toLowerCase())) {
    issue('tenant_id', `must be the router's tenant id or domain, not '${a.tenant_id}': ${a.mode} tokens are issued by a specific tenant`);
  }
  if (a.client_secret && a.client_secret_env) issue('client_secret', 'set either client_secret or client_secret_env, not both');
  const secretEnv = a.client_secret_env ?? DEFAULT_SECRET_ENV;
  const secret = a.client_secret ?? readEnv(secretEnv);
  if (!secret) {
    issue('client_secret', `required when mode is ${a.mode}: set the environment variable ${secretEnv} (or name another one with client_secret_env, or set client_secret)`);
  }
  const scopes = a.scopes ?? (a.audience ? [`${a.audience.replace(/\/+$/, '')}/.default`] : []);
  if (a.mode === 'client_credentials' && scopes.some((s) => !s.endsWith('/.default'))) {
    issue('scopes', 'client_credentials needs `{audience}/.default` scopes: app tokens carry app roles, not delegated scopes');
  }
  if (!a.audience || !a.tenant_id || !a.client_id || !secret || ctx.issues.length) return z.NEVER;
  return {
    mode: a.mode,
    audience: a.audience,
    scopes,
    tenantId: a.tenant_id,
    clientId: a.client_id,
    clientSecret: secret,
    authority: a.authority.replace(/\/+$/, ''),
  };
});

function readEnv(name: string): string | undefined {
  const value = process.env[name];
  return value ? value : undefined;
}
