import { z } from 'zod';
import { boolish, positiveInt } from '@stoa/config';

/** `audit:` — one database record per proxied call. */
export const auditConfigSchema = z
  .strictObject({
    /** Keep code cells themselves; by default only their sha256 is stored. */
    store_code: boolish.default(false),
    /** Records older than this are deleted (checked hourly). */
    retention_days: positiveInt.default(30),
  })
  .prefault({});
export type AuditConfig = z.output<typeof auditConfigSchema>;
