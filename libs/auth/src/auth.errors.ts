import { AppError, ErrorKind } from '@stoa/core';

/** No or bad credentials: 401 with a `WWW-Authenticate` challenge. */
export class UnauthenticatedError extends AppError {
  readonly code = 'UNAUTHENTICATED';
  readonly kind = ErrorKind.unauthenticated;
  constructor(
    message: string,
    /** Whether the caller sent a token (the challenge then carries `error="invalid_token"`). */
    readonly tokenSent: boolean,
  ) {
    super(message);
  }
}

/** Authenticated but not allowed (never carries a challenge). */
export class ForbiddenError extends AppError {
  readonly code = 'FORBIDDEN';
  readonly kind = ErrorKind.forbidden;
}
