/** Who is calling. Every request has one; every session, job and artifact belongs to one. */
export interface Principal {
  /** Stable identity: `oid@tid` for Entra, `dev-user@dev-tenant` for no-op auth. */
  readonly id: string;
  readonly name?: string;
  readonly roles: readonly string[];
  readonly scopes: readonly string[];
  /** How the identity was established. */
  readonly source: 'entra' | 'noop';
  /** Raw bearer token, kept in memory for on-behalf-of calls; never logged or put in a kernel env. */
  readonly token?: string;
}

/** The principal used by no-op auth when the caller sends no usable identity. */
export const DEV_PRINCIPAL_ID = 'dev-user@dev-tenant';
