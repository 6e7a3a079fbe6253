import type { AuthConfig } from './auth.config';

/** What the discovery documents and challenges need. */
export interface ProtectedResourceSettings {
  auth: AuthConfig;
  /** Absolute base URL (PUBLIC_BASE_URL); challenges are relative without it. */
  publicBaseUrl?: string;
}
export const PROTECTED_RESOURCE_SETTINGS = Symbol('PROTECTED_RESOURCE_SETTINGS');

/** RFC 9728 Protected Resource Metadata for this server. */
export function protectedResourceMetadata(s: ProtectedResourceSettings, requestBase: string): Record<string, unknown> {
  const a = s.auth;
  if (a.mode === 'noop')
    return {
      resource: s.publicBaseUrl ?? requestBase,
      authorization_servers: [],
      bearer_methods_supported: ['header'],
    };
  const resource = a.resource ?? `api://${a.client_id as string}`;
  return {
    resource,
    authorization_servers: [`${a.authority.replace(/\/+$/, '')}/${a.tenant_id as string}/v2.0`],
    scopes_supported: a.scopes_supported ?? [`${resource}/.default`],
    bearer_methods_supported: ['header'],
  };
}

/** `WWW-Authenticate` for a 401 on `path`: resource_metadata (path-suffixed for /mcp), plus the error when a token was sent. */
export function bearerChallenge(
  s: ProtectedResourceSettings,
  path: string,
  tokenSent: boolean,
  description: string,
): string {
  const suffix = path === '/mcp' || path.startsWith('/mcp/') || path.startsWith('/mcp?') ? '/mcp' : '';
  const base = s.publicBaseUrl?.replace(/\/+$/, '') ?? '';
  let value = `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource${suffix}"`;
  if (tokenSent) value += `, error="invalid_token", error_description="${description.replace(/["\\\r\n]/g, ' ')}"`;
  return value;
}
