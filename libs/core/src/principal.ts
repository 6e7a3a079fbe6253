/** Who is calling. Every request has one; every session, job and artifact belongs to one. */
export interface Principal {
  /** Stable identity: `oid@tid` for Entra, `dev-user@dev-tenant` for no-op auth. */
  readonly id: string;
  readonly name?: string;
  readonly roles: readonly string[];
  readonly scopes: readonly string[];
  /** How the identity was established (`custom`: an embedding's own resolver). */
  readonly source: 'entra' | 'noop' | 'custom';
  /** Raw bearer token, kept in memory for on-behalf-of calls; never logged or put in a kernel env. */
  readonly token?: string;
}

/** A frozen copy of `p` without its bearer token: what extension points (hooks, publishers) are shown. */
export function tokenlessPrincipal(p: Principal): Readonly<Omit<Principal, 'token'>> {
  return Object.freeze({
    id: p.id,
    name: p.name,
    roles: Object.freeze([...p.roles]),
    scopes: Object.freeze([...p.scopes]),
    source: p.source,
  });
}

/** The principal used by no-op auth when the caller sends no usable identity. */
export const DEV_PRINCIPAL_ID = 'dev-user@dev-tenant';
