import { z } from 'zod';
import { positiveInt } from '@stoa/config';

/** An optional http(s) base URL (trimmed, no trailing `/`); empty means unset. */
export function optionalBaseUrl(example: string) {
  return z
    .string()
    .optional()
    .transform((u) => u?.trim().replace(/\/+$/, '') || undefined)
    .refine((u) => u === undefined || /^https?:\/\/[^/]/.test(u), `must be an http(s) URL, e.g. ${example}`);
}

/** `activity:` in every app's YAML — where activity events go. Off unless a URL is set. */
export const activityPublisherConfigSchema = z
  .strictObject({
    /** The activity app's base URL (ACTIVITY_UI_URL, as the reference names it); empty → publishing is off. */
    url: optionalBaseUrl('http://127.0.0.1:8030').meta({ env: 'ACTIVITY_UI_URL' }),
    /**
     * Entra ID: the activity app's application ID URI (ACTIVITY_UI_AUDIENCE); each POST carries a token for
     * `{audience}/.default` from the default Azure credential (the app needs the writer role assigned).
     */
    audience: z.string().optional().meta({ env: 'ACTIVITY_UI_AUDIENCE' }),
    /** No-op mode: the shared secret the activity app expects from writers on loopback (ACTIVITY_UI_SECRET). */
    secret: z.string().min(16, 'use at least 16 characters').optional().meta({ env: 'ACTIVITY_UI_SECRET' }),
    /** Events held while the UI is slow or down; beyond it the oldest are dropped (and counted). */
    queue_size: positiveInt.default(500),
    /** Events per POST. */
    batch_size: positiveInt.default(50),
    /** A POST that takes longer is abandoned and its events dropped. */
    timeout_ms: positiveInt.default(2000),
    /**
     * After a failed POST, the next one waits this long, doubling with each further failure up to
     * `retry_max_delay_ms` (events keep queueing, oldest dropped); a success resets it.
     */
    retry_delay_ms: positiveInt.default(1000),
    /** Longest wait between POSTs while the activity app keeps failing. */
    retry_max_delay_ms: positiveInt.default(30_000),
    /** Largest total size of an event's displays (figures); larger ones are replaced by a note. */
    max_display_bytes: positiveInt.default(2 * 1024 * 1024),
    /** Largest stdout/stderr/code text per event field (characters); longer text keeps head and tail. */
    max_text_chars: positiveInt.default(100_000),
  })
  .prefault({});
export type ActivityPublisherConfig = z.output<typeof activityPublisherConfigSchema>;
