import type { StreamText } from '@stoa/kernel';

const GUIDANCE =
  'Store large results in variables and inspect them server-side instead of printing them in full ' +
  '(e.g. print(result[:200]), len(result), type(result)).';

const fmt = (n: number): string => n.toLocaleString('en-US');

/** stdout over `limit` (> 0): first `limit` characters plus a marker (reference §1.2.1). */
export function truncateStdout(s: StreamText, limit: number): string {
  if (s.length <= limit) return s.text();
  return `${s.head(limit)}\n[OUTPUT TRUNCATED: ${fmt(s.length)} characters exceeded the ${fmt(limit)} character limit. ${GUIDANCE}]`;
}

/** stderr over `limit`: first and last ⌊limit/2⌋ characters around a marker, so traceback ends stay visible. */
export function truncateStderr(s: StreamText, limit: number): string {
  if (s.length <= limit) return s.text();
  const half = Math.floor(limit / 2);
  return `${s.head(half)}\n[STDERR TRUNCATED: ${fmt(s.length)} characters exceeded the ${fmt(limit)} character limit. ${GUIDANCE}]\n${s.tail(half)}`;
}
