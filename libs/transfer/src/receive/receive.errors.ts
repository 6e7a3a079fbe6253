import { appError, ErrorKind } from '@stoa/core';

// Refusals of `POST /object-transfer/receive`. Messages are the reference's (§6.5): senders match on them.

/** The body is not the JSON envelope, or a field of it is missing, mistyped or not base64. */
export class TransferBodyError extends appError('TRANSFER_BODY_INVALID', ErrorKind.invalid) {}

/** The body, or the object it carries, is larger than `transfer.max_object_bytes`. */
export class TransferTooLargeError extends appError('TRANSFER_TOO_LARGE', ErrorKind.tooLarge) {}

/** The request carries no caller identity. */
export class ReceiveUnauthenticatedError extends appError('RECEIVE_UNAUTHENTICATED', ErrorKind.unauthenticated) {
  constructor() {
    super('Authentication required');
  }
}

/** No session to load into: the named one is unknown, or the caller has none. */
export class ReceiveTargetNotFoundError extends appError('RECEIVE_TARGET_NOT_FOUND', ErrorKind.notFound) {
  constructor(sessionId: string | undefined) {
    super(sessionId ? `Session '${sessionId}' not found` : 'No active session found to receive the object');
  }
}

/** The target session is running code; the sender should retry when it has finished. */
export class ReceiveSessionBusyError extends appError('RECEIVE_SESSION_BUSY', ErrorKind.conflict) {
  constructor(sessionId: string, job: string | undefined) {
    super(`Session '${sessionId}' is busy running code${job ? ` (job ${job})` : ''}; send again when it has finished.`);
  }
}

/** This process is already receiving as many objects as it allows at once. */
export class ReceiveCapacityError extends appError('RECEIVE_CAPACITY', ErrorKind.unavailable) {
  constructor() {
    super('This server is receiving too many objects at once. Retry in a few seconds.');
  }
}

/** The kernel could not load the object (or the server could not hand it over); `details.hint` may say why. */
export class ObjectImportError extends appError('OBJECT_IMPORT_FAILED', ErrorKind.internal) {}
