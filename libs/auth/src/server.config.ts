import { z } from 'zod';
import { boolish, positiveInt } from '@stoa/config';

/** `server:` — an app's HTTP listener (executor, router, gateway, dispatcher). */
export const serverConfigSchema = z
  .strictObject({
    host: z.string().default('127.0.0.1').meta({ env: 'HOST' }),
    port: z.coerce.number().int().min(0).max(65535).default(8000).meta({ env: 'PORT' }),
    /** Extra Host header names accepted (DNS-rebinding protection). */
    allowed_hosts: z.array(z.string()).default([]),
    /**
     * Largest accepted request body, in MiB: room for the largest cell (execution.max_code_bytes, 1 MiB by default,
     * even fully JSON-escaped) while a bigger body is refused from its Content-Length before it is read — reading,
     * parsing and copying a 10 MB body holds the process for ~100 ms and its memory for a while.
     */
    max_body_mb: positiveInt.default(4),
    allow_unauthenticated_remote: boolish.default(false).meta({ env: 'STOA_ALLOW_UNAUTHENTICATED_REMOTE' }),
    /** Absolute public URL of this server (PUBLIC_BASE_URL): absolute links in 401 challenges. */
    public_url: z
      .url()
      .optional()
      .meta({ env: ['PUBLIC_BASE_URL', 'SERVER_PUBLIC_URL'] }),
  })
  .prefault({});
export type ServerConfig = z.output<typeof serverConfigSchema>;
