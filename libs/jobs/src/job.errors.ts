import { appError, clip, ErrorKind } from '@stoa/core';

/** Unknown job, or someone else's (identical answers). */
export class JobNotFoundError extends appError('JOB_NOT_FOUND', ErrorKind.notFound) {
  constructor(id: string) {
    super(`Job ${clip(id)} not found`);
  }
}

/** Unknown batch, or someone else's (identical answers). */
export class BatchNotFoundError extends appError('BATCH_NOT_FOUND', ErrorKind.notFound) {
  constructor(id: string) {
    super(`404: Batch '${clip(id)}' not found`);
  }
}
