/** Per-upstream `auth:` config (passthrough | obo | client_credentials | none), validated and resolved. */
export { upstreamAuthSchema, UpstreamAuthMode, type ConfidentialAuth, type PassthroughAuth, type UpstreamAuthConfig } from './upstream-auth.config';
/** The `Authorization` header the router sends to an upstream for a caller; refuses unsafe passthrough. */
export { UpstreamCredentials, type MsalAuthorityOverrides, type UpstreamCredentialsOptions } from './upstream-credentials';
/** An MSAL network client that trusts a private CA. */
export { httpsNetworkClient, type HttpsNetworkClientOptions } from './https-network-client';
/** Token endpoint failures, and caller identities an upstream cannot use. */
export { UpstreamIdentityError, UpstreamTokenError } from './credentials.errors';
