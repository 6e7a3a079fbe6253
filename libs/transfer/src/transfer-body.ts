/**
 * Parses an object-transfer body `{variable_name, data, metadata, session_id?}` without turning a 350 MB base64
 * field into a JSON string first: the `data` value is cut out of the raw bytes, the rest is parsed as ordinary
 * (small) JSON. Bodies this shortcut cannot prove equivalent (escapes in data, a "data" key nested elsewhere)
 * fall back to a full JSON.parse, so the answer is always the same as parsing the whole body.
 */
export function parseTransferBody(raw: Buffer): Record<string, unknown> | undefined {
  const quick = cutData(raw);
  if (quick) return quick;
  try {
    const parsed: unknown = JSON.parse(raw.toString('utf8'));
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

const KEY = Buffer.from('"data"');
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

function cutData(raw: Buffer): Record<string, unknown> | undefined {
  for (let at = raw.indexOf(KEY); at !== -1; at = raw.indexOf(KEY, at + 1)) {
    let i = skipSpace(raw, at + KEY.length);
    if (raw[i] !== 0x3a) continue; // ':'
    i = skipSpace(raw, i + 1);
    if (raw[i] !== QUOTE) continue;
    const start = i + 1;
    const end = raw.indexOf(QUOTE, start);
    if (end === -1 || raw.subarray(start, end).includes(BACKSLASH)) return undefined;
    let rest: unknown;
    try {
      rest = JSON.parse(Buffer.concat([raw.subarray(0, start), raw.subarray(end)]).toString('utf8'));
    } catch {
      return undefined;
    }
    // Only a top-level "data" whose value was exactly the cut span is accepted.
    if (!rest || typeof rest !== 'object' || Array.isArray(rest) || (rest as Record<string, unknown>).data !== '') return undefined;
    return { ...(rest as Record<string, unknown>), data: raw.subarray(start, end).toString('latin1') };
  }
  return undefined;
}

function skipSpace(b: Buffer, i: number): number {
  while (i < b.length && (b[i] === 0x20 || b[i] === 0x0a || b[i] === 0x0d || b[i] === 0x09)) i++;
  return i;
}

/** Strict standard base64 (length a multiple of 4, padding only at the end) — a scan, not a backtracking regex. */
export function isBase64(s: string): boolean {
  if (s.length % 4 !== 0 || /[^A-Za-z0-9+/=]/.test(s)) return false;
  const pad = s.indexOf('=');
  return pad === -1 || (pad >= s.length - 2 && (pad === s.length - 1 || s[s.length - 1] === '='));
}
