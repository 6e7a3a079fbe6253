import { entraSettings, type AuthConfig } from '@stoa/auth';
import { ConfigError } from '@stoa/config';
import { upstreamAuthSchema, type ResolvedUpstreamAuth, type UpstreamAuthConfig } from './upstream-auth.config';

/** How a connector (or an executor, towards its peers) authenticates its own callers. */
export interface ConnectorIdentity {
  mode: 'noop' | 'entra';
  /** Audiences its callers' tokens carry: passthrough goes only to these. */
  audiences: readonly string[];
  /** Its own Entra app registration: the on-behalf-of defaults when an upstream's audience differs. */
  tenantId?: string;
  clientId?: string;
  authority?: string;
}

/** The connector identity of an `auth:` block. */
export function connectorIdentity(auth: AuthConfig): ConnectorIdentity {
  if (auth.mode === 'noop') return { mode: 'noop', audiences: [] };
  const s = entraSettings(auth);
  return {
    mode: 'entra',
    audiences: s.audiences,
    tenantId: s.tenantId,
    clientId: s.clientId,
    authority: auth.authority.replace(/\/+$/, ''),
  };
}

/**
 * An upstream `auth:` block with no mode written becomes the caller's own identity: passthrough when the
 * upstream is the connector's own audience (or the connector runs no-op auth), else on-behalf-of with the
 * connector's app registration as defaults. Throws a ConfigError naming what on-behalf-of still needs.
 */
export function resolveUpstreamAuth(
  upstream: string,
  auth: UpstreamAuthConfig,
  id: ConnectorIdentity,
): ResolvedUpstreamAuth {
  if (auth.mode !== 'caller') return auth;
  if (id.mode === 'noop' || !auth.audience || id.audiences.includes(auth.audience))
    return { mode: 'passthrough', ...(auth.audience ? { audience: auth.audience } : {}) };
  const b = auth.block;
  const parsed = upstreamAuthSchema.safeParse({
    ...b,
    mode: 'obo',
    tenant_id: b.tenant_id ?? id.tenantId,
    client_id: b.client_id ?? id.clientId,
    authority: b.authority ?? id.authority,
  });
  if (parsed.success) return parsed.data as ResolvedUpstreamAuth;
  throw new ConfigError(`upstream "${upstream}"`, [
    `auth.audience '${auth.audience}' is not this connector's own (${id.audiences.map((a) => `'${a}'`).join(', ')}), so with no auth.mode written each caller's identity goes there by on-behalf-of, which still needs:`,
    ...parsed.error.issues.map((i) => `auth.${i.path.join('.')}: ${i.message}`),
  ]);
}

/**
 * `none` and `client_credentials` make every caller one upstream principal. Beside Entra auth that is refused
 * unless `shared_identity_acknowledged: true` says so; otherwise it is allowed with a notice logged at start.
 */
export function sharedIdentityCheck(
  upstream: string,
  auth: ResolvedUpstreamAuth,
  id: ConnectorIdentity,
): { refusal?: string; notice?: string } {
  if (auth.mode !== 'none' && auth.mode !== 'client_credentials') return {};
  const how = auth.mode === 'none' ? 'sends no token' : `sends one app token (client ${auth.clientId})`;
  const shared = `auth.mode: ${auth.mode} ${how}, so every caller reaches upstream "${upstream}" as one and the same identity: callers can list and resume each other's sessions there.`;
  if (id.mode === 'entra' && !auth.sharedIdentityAcknowledged) {
    return {
      refusal:
        `${shared} This connector authenticates its callers with Entra ID, so that is refused. Remove auth.mode to pass each caller's identity ` +
        `(passthrough, or on-behalf-of when auth.audience differs), or set shared_identity_acknowledged: true in this auth block if the upstream keeps no per-user state.`,
    };
  }
  return { notice: `${shared} Remove auth.mode to pass each caller's identity instead.` };
}
