import { appError, ErrorKind } from '@stoa/core';

/** No or bad credentials: 401 with a `WWW-Authenticate` challenge. */
export class UnauthenticatedError extends appError('UNAUTHENTICATED', ErrorKind.unauthenticated) {
  constructor(
    message: string,
    /** Whether the caller sent a token (the challenge then carries `error="invalid_token"`). */
    readonly tokenSent: boolean,
  ) {
    super(message);
  }
}

/** Authenticated but not allowed (never carries a challenge). */
export class ForbiddenError extends appError('FORBIDDEN', ErrorKind.forbidden) {}
