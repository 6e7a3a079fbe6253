/** How much of an untrusted value (a name, an id, a query) messages and logs repeat by default. */
export const ECHO_CHARS = 80;

/**
 * Untrusted input as error messages and logs may repeat it: at most `max` characters, and when cut, how long
 * the whole was — so a 10 MB tool name costs a few bytes in the answer and in the log, never 10 MB.
 * Anything but a string is named by its type, never serialised.
 */
export function clip(value: unknown, max = ECHO_CHARS): string {
  if (typeof value !== 'string') return `(${kindOf(value)})`;
  if (value.length <= max) return value;
  let end = max;
  const last = value.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--; // never cut a surrogate pair in half
  return `${value.slice(0, end)}… (${value.length} characters)`;
}

/** `a string`, `an object`, `an array`, `null`… for messages that say what was sent instead. */
export function kindOf(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/**
 * Whether JSON text nests arrays/objects deeper than `max` (brackets inside strings do not count). One linear
 * pass with native string skipping, so a check costs far less than the parse it protects: deeply nested input
 * parses, but re-serialising it (the MCP SDK does) overflows the stack.
 */
export function jsonNestsDeeper(text: Buffer, max: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === 0x22) {
      i = closingQuote(text, i + 1);
      if (i < 0) return false; // unterminated string: the parser reports it
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return false;
}

/** Index of the quote closing a JSON string whose body starts at `from` (escaped quotes skipped), or -1. */
export function closingQuote(text: Buffer, from: number): number {
  for (let at = from; ;) {
    const q = text.indexOf(0x22, at);
    if (q < 0) return -1;
    let backslashes = 0;
    while (text[q - 1 - backslashes] === 0x5c) backslashes++;
    if (backslashes % 2 === 0) return q;
    at = q + 1;
  }
}

/**
 * JSON text → value, for request bodies: an object or array at the top (as a JSON-RPC message is) and at most
 * `maxDepth` levels. Throws an Error whose `type` is `entity.too.deep` or `entity.parse.failed`. Self-contained
 * (it and the two scanners above run on the off-loop parser thread as they are).
 */
export function parseJsonText(buf: Buffer, maxDepth: number): unknown {
  const fail = (message: string, type: string) => Object.assign(new Error(message), { type });
  if (jsonNestsDeeper(buf, maxDepth)) throw fail(`JSON nested deeper than ${maxDepth} levels`, 'entity.too.deep');
  const text = buf.toString('utf8');
  const first = /\S/.exec(text)?.[0];
  if (first !== '{' && first !== '[')
    throw fail('a JSON-RPC message must be a JSON object or array', 'entity.parse.failed');
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw fail((err as Error).message, 'entity.parse.failed');
  }
}
