import { appError, ErrorKind } from '@stoa/core';

/** The token endpoint refused or could not be reached while getting a token for an upstream. */
export class UpstreamTokenError extends appError('UPSTREAM_TOKEN_FAILED', ErrorKind.unavailable) {}

/** The caller's identity cannot be used for this upstream (no token to forward, or an app-only caller for OBO). */
export class UpstreamIdentityError extends appError('UPSTREAM_IDENTITY_UNUSABLE', ErrorKind.forbidden) {}
