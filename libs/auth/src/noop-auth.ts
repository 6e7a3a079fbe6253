import { DEV_PRINCIPAL_ID, type Principal } from '@stoa/core';

/**
 * No-op development auth (reference §7.3): the identity comes from the `oid`/`sub` and `tid` of an
 * unsigned JWT if one is sent — nothing is verified — else `dev-user@dev-tenant`.
 */
export function noopPrincipal(authorization: string | undefined): Principal {
  const token = authorization?.startsWith('Bearer ') ? authorization.slice(7).trim() : undefined;
  const claims = token ? decodeUnverified(token) : undefined;
  const user = str(claims?.oid) ?? str(claims?.sub);
  const tenant = str(claims?.tid) ?? tenantFromIssuer(str(claims?.iss)) ?? 'default';
  return {
    id: user ? `${user}@${tenant}` : DEV_PRINCIPAL_ID,
    name: str(claims?.name) ?? 'Development User',
    roles: Array.isArray(claims?.roles)
      ? (claims.roles as unknown[]).filter((r): r is string => typeof r === 'string')
      : [],
    scopes: typeof claims?.scp === 'string' ? claims.scp.split(' ') : [],
    source: 'noop',
    token,
  };
}

/**
 * The inverse of {@link noopPrincipal}: an unsigned JWT that no-op auth resolves to the same principal. Connectors
 * in no-op mode send it upstream for callers who sent no token, so each caller stays one principal there.
 */
export function noopToken(principal: Principal): string {
  const at = principal.id.lastIndexOf('@');
  const claims = {
    oid: at > 0 ? principal.id.slice(0, at) : principal.id,
    tid: at > 0 ? principal.id.slice(at + 1) : 'default',
    ...(principal.name ? { name: principal.name } : {}),
    ...(principal.roles.length ? { roles: principal.roles } : {}),
    ...(principal.scopes.length ? { scp: principal.scopes.join(' ') } : {}),
  };
  const part = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${part({ alg: 'none', typ: 'JWT' })}.${part(claims)}.`;
}

function decodeUnverified(token: string): Record<string, unknown> | undefined {
  const parts = token.split('.');
  if (parts.length !== 3 || !parts[1]) return undefined;
  try {
    const payload: unknown = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
    return payload && typeof payload === 'object' ? (payload as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v ? v : undefined;
}

/** Tenant from `…/{tenant}/v2.0` or `https://sts.windows.net/{tenant}/`. */
function tenantFromIssuer(iss: string | undefined): string | undefined {
  if (!iss) return undefined;
  const segments = iss.replace(/\/+$/, '').split('/').filter(Boolean);
  let last = segments.pop();
  if (last && /^v\d+\.\d+$/.test(last)) last = segments.pop();
  return last && !last.includes(':') ? last : undefined;
}
