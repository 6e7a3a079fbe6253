import { z } from 'zod';
import { nonNegative } from '@stoa/config';

/** `jobs:` in a server YAML. */
export const jobsConfigSchema = z
  .strictObject({
    /** Redis for BullMQ (REDIS_URL); unset → in-process jobs (single replica). */
    redis_url: z.string().optional().meta({ env: 'REDIS_URL' }),
    /** Redis key prefix shared by the replicas of one server; default `stoa:{name}` (set it when two deployments share a Redis). */
    prefix: z.string().optional().meta({ env: 'STOA_JOBS_PREFIX' }),
    /** Terminal jobs and batches stay readable this long. */
    retention_hours: nonNegative.default(24),
    /** A replica that stops renewing its lock for this long loses its item to another replica. */
    lock_duration_seconds: nonNegative.default(30),
    stalled_interval_seconds: nonNegative.default(30),
  })
  .prefault({});
export type JobsConfig = z.output<typeof jobsConfigSchema>;
