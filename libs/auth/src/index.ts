/** No-op development principal from an unverified JWT, and the unsigned JWT naming a principal. */
export { noopPrincipal, noopToken } from './noop-auth';
/** Bind-address rules: loopback detection, the no-op remote refusal, allowed Host names. */
export { allowedHostsFor, isLoopback, refuseOpenNoopBind, unauthenticatedRemoteRefusal } from './bind';
/** `auth:` config schema, env overrides and resolved Entra settings. */
export { authConfigSchema, entraSettings, type AuthConfig, type EntraSettings } from './auth.config';
/** The HTTP status of each AppError kind, for transports with their own body shape. */
export { HTTP_STATUS, sendError } from './http-error.filter';
/** Auth errors (401 with challenge, 403). */
export { ForbiddenError, UnauthenticatedError } from './auth.errors';
/** Entra ID access-token validation (jose, JWKS from OIDC metadata). */
export { EntraTokenVerifier } from './entra-verifier';
/** Route decorators: @Public, @AdminOnly, @CurrentPrincipal. */
export { AdminOnly, CurrentPrincipal, Public } from './decorators';
/** RFC 9728 metadata and 401 challenges. */
export { bearerChallenge, type ProtectedResourceSettings } from './protected-resource';
/** Nest module wiring guard, strategy, filter and discovery endpoints. */
export { AuthModule, type AuthModuleOptions } from './auth.module';
/** HTTP hardening every app installs: Host/Origin checks, helmet on /admin, JSON bodies with a clear 413. */
export { type HttpBasicsOptions, type RawHandler, type RawRequest } from './http-basics';
/** An app's Nest HTTP app for its `main.ts`: created hardened, admin OpenAPI document, listening. */
export {
  adminApiDocument,
  createHttpApp,
  type FrontDoor,
  listenOn,
  requestHandler,
  type RequestHandler,
  serveAdminDocs,
  serverApp,
  type HttpAppOptions,
  type ServerApp,
} from './http-app';
/** A request's principal outside the guard chain (connector hot paths). */
export { PrincipalResolver } from './principal-resolver.service';
/** `server:` — the HTTP listener block every app shares. */
export { serverConfigSchema, type ServerConfig } from './server.config';

/** A browser page's static files served with a strict CSP (the activity dashboard, the square's live view). */
export { STRICT_PAGE_CSP, StaticPage } from './static-page';
/** The identity extension point: an embedding's own resolver (a gateway header, mTLS), asked before Entra / no-op. */
export { CUSTOM_PRINCIPAL_RESOLVER, type CustomPrincipalResolver, type ResolvedIdentity } from './custom-principal';
