import { appError, ErrorKind, InvalidInputError } from '@stoa/core';
import { activityEventSchema, type ActivityEvent } from '@stoa/activity';

/** A batch or one of its events is larger than the app accepts. */
export class EventTooLargeError extends appError('EVENT_TOO_LARGE', ErrorKind.tooLarge) {}

export interface IngestLimits {
  max_batch_events: number;
  max_event_bytes: number;
}

/**
 * A POST /events body — `{"events": [...]}`, a bare array, or one event (the reference's form) — validated whole:
 * one bad or oversized event refuses the batch with every reason, so nothing is stored half.
 */
export function parseBatch(body: unknown, limits: IngestLimits): ActivityEvent[] {
  const raw: unknown[] = Array.isArray(body)
    ? body
    : body && typeof body === 'object' && Array.isArray((body as { events?: unknown }).events)
      ? (body as { events: unknown[] }).events
      : [body];
  if (!raw.length) throw new InvalidInputError('The batch holds no events: send {"events": [ … ]} with at least one.');
  if (raw.length > limits.max_batch_events)
    throw new EventTooLargeError(
      `The batch holds ${raw.length} events; the limit is ${limits.max_batch_events} (ingest.max_batch_events). Send smaller batches.`,
    );
  const problems: string[] = [];
  const events: ActivityEvent[] = [];
  raw.forEach((e, i) => {
    const bytes = Buffer.byteLength(JSON.stringify(e) ?? '');
    if (bytes > limits.max_event_bytes) {
      problems.push(`events[${i}]: ${bytes} bytes; the limit is ${limits.max_event_bytes} (ingest.max_event_bytes)`);
      return;
    }
    const parsed = activityEventSchema.safeParse(e);
    if (parsed.success) events.push(parsed.data);
    else
      for (const issue of parsed.error.issues.slice(0, 5))
        problems.push(
          `events[${i}]${issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('')}: ${issue.message}`,
        );
  });
  if (!problems.length) return events;
  const tooLarge = problems.every((p) => p.includes('ingest.max_event_bytes'));
  const message = `No event was stored: ${problems.slice(0, 20).join('; ')}. Fix these events and send the batch again.`;
  throw tooLarge
    ? new EventTooLargeError(message)
    : new InvalidInputError(message, { problems: problems.slice(0, 100) });
}
