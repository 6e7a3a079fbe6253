import type { ActivityDisplay } from '../activity.types';

/** Text fields clipped before an event is queued (agent output can be megabytes). */
const TEXT_FIELDS = ['code', 'stdout', 'stderr', 'error'] as const;

/** Head and tail of a long text with a marker saying how much was left out. */
export function clipText(s: string, max: number): string {
  if (s.length <= max) return s;
  const half = Math.floor(max / 2);
  return `${s.slice(0, half)}\n… [${(s.length - 2 * half).toLocaleString('en-US')} characters omitted] …\n${s.slice(-half)}`;
}

/** Clips an event's long text fields in place. */
export function clipTextFields(e: Record<string, unknown>, maxChars: number): void {
  for (const f of TEXT_FIELDS) {
    const v = e[f];
    if (typeof v === 'string' && v.length > maxChars) e[f] = clipText(v, maxChars);
  }
}

/**
 * Displays up to `maxBytes` in total, in order; each one beyond is kept as an empty placeholder whose metadata
 * says it was omitted and how large it was (the dashboard says so instead of rendering it).
 */
export function capDisplays(displays: readonly ActivityDisplay[], maxBytes: number): ActivityDisplay[] {
  let used = 0;
  return displays.map((d) => {
    used += d.data.length;
    if (used <= maxBytes) return d;
    return { mime_type: d.mime_type, data: '', metadata: { ...d.metadata, omitted: true, size_bytes: d.data.length } };
  });
}
