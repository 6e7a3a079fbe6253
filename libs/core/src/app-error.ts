/** Closed set of error kinds; each transport maps a kind to its own status. */
export const ErrorKind = {
  invalid: 'invalid',
  unauthenticated: 'unauthenticated',
  forbidden: 'forbidden',
  notFound: 'not_found',
  conflict: 'conflict',
  tooMany: 'too_many',
  tooLarge: 'too_large',
  unavailable: 'unavailable',
  internal: 'internal',
} as const;
export type ErrorKind = (typeof ErrorKind)[keyof typeof ErrorKind];

/**
 * Base of every error a lib throws. `code` is stable API; `message` tells the reader (often an agent)
 * what happened and what to do next. `details` are extra JSON fields some wire contracts require.
 */
export abstract class AppError extends Error {
  abstract readonly code: string;
  abstract readonly kind: ErrorKind;
  readonly details: Record<string, unknown>;

  constructor(message: string, details: Record<string, unknown> = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.details = details;
  }
}

/**
 * The base of one error class: `class QuotaError extends appError('QUOTA', ErrorKind.tooMany) {}`. The code and
 * kind are typed literals; a subclass adds a constructor only when its message is fixed.
 */
export function appError<const C extends string, const K extends ErrorKind>(code: C, kind: K) {
  return class extends AppError {
    readonly code = code;
    readonly kind = kind;
  };
}

/** Bad input at the edge (a tool argument, an HTTP body). */
export class InvalidInputError extends appError('INVALID_INPUT', ErrorKind.invalid) {}

/** A named thing does not exist (or is not the caller's). */
export class NotFoundError extends appError('NOT_FOUND', ErrorKind.notFound) {}

/** Something this process depends on is not available right now; retrying later may work. */
export class UnavailableError extends appError('UNAVAILABLE', ErrorKind.unavailable) {}

/** True when `err` is one of ours. */
export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}
