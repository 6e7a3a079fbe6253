import { randomBytes } from 'node:crypto';

let lastMs = 0;
let seq = 0;

/**
 * A 32-hex event id that sorts by arrival within a process: 12 hex of epoch ms, 4 of sequence, 16 random. SSE
 * clients resume after the last id they saw (`Last-Event-ID`), so string order must be time order.
 */
export function eventId(now = Date.now()): string {
  if (now > lastMs) {
    lastMs = now;
    seq = 0;
  } else if (++seq > 0xffff) {
    lastMs++;
    seq = 0;
  }
  return `${lastMs.toString(16).padStart(12, '0')}${seq.toString(16).padStart(4, '0')}${randomBytes(8).toString('hex')}`;
}

/** Whether `s` has the shape of an event id (anything else in Last-Event-ID is ignored). */
export function isEventId(s: string): boolean {
  return /^[0-9a-f]{32}$/.test(s);
}
