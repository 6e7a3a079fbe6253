import { AppError, ErrorKind } from '@stoa/core';

/** A kernel could not be started (interpreter missing, driver crashed at start). */
export class KernelStartError extends AppError {
  readonly code = 'KERNEL_START_FAILED';
  readonly kind = ErrorKind.unavailable;
}

/** The kernel is gone; the session must start a fresh one. */
export class KernelDeadError extends AppError {
  readonly code = 'KERNEL_DEAD';
  readonly kind = ErrorKind.conflict;
}
