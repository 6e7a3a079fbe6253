import { AppError, clip, ErrorKind } from '@stoa/core';

/** Unknown job, or someone else's (identical answers). */
export class JobNotFoundError extends AppError {
  readonly code = 'JOB_NOT_FOUND';
  readonly kind = ErrorKind.notFound;
  constructor(id: string) {
    super(`Job ${clip(id)} not found`);
  }
}

/** Unknown batch, or someone else's (identical answers). */
export class BatchNotFoundError extends AppError {
  readonly code = 'BATCH_NOT_FOUND';
  readonly kind = ErrorKind.notFound;
  constructor(id: string) {
    super(`404: Batch '${clip(id)}' not found`);
  }
}
