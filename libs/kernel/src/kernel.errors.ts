import { appError, ErrorKind } from '@stoa/core';

/** A kernel could not be started (interpreter missing, driver crashed at start). */
export class KernelStartError extends appError('KERNEL_START_FAILED', ErrorKind.unavailable) {}

/** The kernel is gone; the session must start a fresh one. */
export class KernelDeadError extends appError('KERNEL_DEAD', ErrorKind.conflict) {}
