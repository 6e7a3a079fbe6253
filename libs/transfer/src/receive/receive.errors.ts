import { AppError, ErrorKind } from '@stoa/core';

// Refusals of `POST /object-transfer/receive`. Messages are the reference's (§6.5): senders match on them.

/** The body is not the JSON envelope, or a field of it is missing, mistyped or not base64. */
export class TransferBodyError extends AppError {
  readonly code = 'TRANSFER_BODY_INVALID';
  readonly kind = ErrorKind.invalid;
}

/** The body, or the object it carries, is larger than `transfer.max_object_bytes`. */
export class TransferTooLargeError extends AppError {
  readonly code = 'TRANSFER_TOO_LARGE';
  readonly kind = ErrorKind.tooLarge;
}

/** The request carries no caller identity. */
export class ReceiveUnauthenticatedError extends AppError {
  readonly code = 'RECEIVE_UNAUTHENTICATED';
  readonly kind = ErrorKind.unauthenticated;
  constructor() {
    super('Authentication required');
  }
}

/** The named session is another caller's. */
export class ReceiveForbiddenError extends AppError {
  readonly code = 'RECEIVE_FORBIDDEN';
  readonly kind = ErrorKind.forbidden;
  constructor() {
    super('Not authorized to write to this session');
  }
}

/** No session to load into: the named one is unknown, or the caller has none. */
export class ReceiveTargetNotFoundError extends AppError {
  readonly code = 'RECEIVE_TARGET_NOT_FOUND';
  readonly kind = ErrorKind.notFound;
  constructor(sessionId: string | undefined) {
    super(sessionId ? `Session '${sessionId}' not found` : 'No active session found to receive the object');
  }
}

/** The target session is running code; the sender should retry when it has finished. */
export class ReceiveSessionBusyError extends AppError {
  readonly code = 'RECEIVE_SESSION_BUSY';
  readonly kind = ErrorKind.conflict;
  constructor(sessionId: string, job: string | undefined) {
    super(`Session '${sessionId}' is busy running code${job ? ` (job ${job})` : ''}; send again when it has finished.`);
  }
}

/** This process is already receiving as many objects as it allows at once. */
export class ReceiveCapacityError extends AppError {
  readonly code = 'RECEIVE_CAPACITY';
  readonly kind = ErrorKind.unavailable;
  constructor() {
    super('This server is receiving too many objects at once. Retry in a few seconds.');
  }
}

/** The kernel could not load the object (or the server could not hand it over); `details.hint` may say why. */
export class ObjectImportError extends AppError {
  readonly code = 'OBJECT_IMPORT_FAILED';
  readonly kind = ErrorKind.internal;
}
