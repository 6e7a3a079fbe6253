import { distance } from 'fastest-levenshtein';

/**
 * The known key closest to `key` when it is close enough to be a typo: a case-insensitive edit distance of at
 * most a third of the key (at least 2), or one name a prefix of the other (`memory` → `memory_mb`).
 */
export function nearestKey(key: string, known: readonly string[]): string | undefined {
  const wanted = key.toLowerCase();
  let best: { name: string; d: number } | undefined;
  for (const name of known) {
    const other = name.toLowerCase();
    const prefix = Math.min(wanted.length, other.length) >= 3 && (other.startsWith(wanted) || wanted.startsWith(other));
    const d = prefix ? 1 : distance(wanted, other);
    if (!best || d < best.d) best = { name, d };
  }
  const limit = Math.max(2, Math.floor(key.length / 3));
  return best && best.d <= limit ? best.name : undefined;
}

/** One problem line per unknown key: its dotted path and the nearest valid name (or the valid names there). */
export function unknownKeyProblems(at: string, keys: readonly string[], known: readonly string[]): string[] {
  return keys.map((key) => {
    const path = at ? `${at}.${key}` : key;
    const near = nearestKey(key, known);
    if (near) return `${path}: unknown key; did you mean ${near}?`;
    const valid = known.length ? `valid keys here: ${[...known].sort().join(', ')}` : 'this section takes no keys';
    return `${path}: unknown key (${valid}); fix its spelling or remove it`;
  });
}
