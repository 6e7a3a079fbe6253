import { z } from 'zod';
import { boolish, positiveInt } from '@stoa/config';

/** `server:` — an app's HTTP listener (executor, router, gateway, dispatcher). */
export const serverConfigSchema = z
  .strictObject({
    host: z.string().default('127.0.0.1'),
    port: z.coerce.number().int().min(0).max(65535).default(8000),
    /** Extra Host header names accepted (DNS-rebinding protection). */
    allowed_hosts: z.array(z.string()).default([]),
    /** Largest accepted request body, in MiB (code cells can be large). */
    max_body_mb: positiveInt.default(16),
    allow_unauthenticated_remote: boolish.default(false),
    /** Absolute public URL of this server (PUBLIC_BASE_URL): absolute links in 401 challenges. */
    public_url: z.url().optional(),
  })
  .prefault({});
export type ServerConfig = z.output<typeof serverConfigSchema>;
