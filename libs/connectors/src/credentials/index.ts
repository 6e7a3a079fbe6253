/** Per-upstream `auth:` config (no mode = the caller's identity | passthrough | obo | client_credentials | none), validated and resolved. */
export {
  upstreamAuthSchema,
  UpstreamAuthMode,
  type CallerAuth,
  type ConfidentialAuth,
  type NoAuth,
  type PassthroughAuth,
  type ResolvedUpstreamAuth,
  type UpstreamAuthConfig,
} from './upstream-auth.config';
/** The connector's own identity, the caller-mode resolution and the shared-identity rule. */
export { connectorIdentity, resolveUpstreamAuth, sharedIdentityCheck, type ConnectorIdentity } from './caller-identity';
/** The `Authorization` header the router sends to an upstream for a caller; refuses unsafe passthrough. */
export {
  UpstreamCredentials,
  type MsalAuthorityOverrides,
  type UpstreamCredentialsOptions,
} from './upstream-credentials';
/** An MSAL network client that trusts a private CA. */
export { httpsNetworkClient, type HttpsNetworkClientOptions } from './https-network-client';
/** Token endpoint failures, and caller identities an upstream cannot use. */
export { UpstreamIdentityError, UpstreamTokenError } from './credentials.errors';
