/**
 * Search text as agents type it, made safe for each database. The syntax is web-search style on both: words must
 * all match, `"quoted phrases"` match adjacent words, `or` separates alternatives, `-word` excludes. Nothing a user
 * types can raise a syntax error (the reference passed raw text to FTS5 MATCH, where `"`, `*`, `:` or `AND` could).
 */

/** Words as SQLite's unicode61 tokenizer sees them: runs of letters and digits. */
const WORD = /[\p{L}\p{N}\p{Co}]+/gu;

interface Term {
  words: string[];
  negated: boolean;
}

/** Alternatives (`or`), each a list of terms that must all (or, negated, must not) match. */
function parse(text: string): Term[][] {
  const groups: Term[][] = [[]];
  for (const part of text.match(/-?"[^"]*"?|[^\s"]+/g) ?? []) {
    const current = groups[groups.length - 1]!;
    if (part.toLowerCase() === 'or') {
      if (current.length) groups.push([]);
      continue;
    }
    const negated = part.startsWith('-');
    const words = part.match(WORD) ?? [];
    if (words.length) current.push({ words, negated });
  }
  // A group with only exclusions cannot be searched on its own (FTS5 NOT is binary): drop it.
  return groups.filter((g) => g.some((t) => !t.negated));
}

/** True when the text has at least one word to search for. */
export function hasSearchTerms(text: string): boolean {
  return parse(text).length > 0;
}

/** An FTS5 MATCH expression of quoted tokens only ('' when there is nothing to search for). */
export function toFts5Query(text: string): string {
  const phrase = (t: Term): string => `"${t.words.join(' ')}"`;
  return parse(text)
    .map((g) => {
      const must = g.filter((t) => !t.negated).map(phrase);
      const not = g.filter((t) => t.negated).map((t) => ` NOT ${phrase(t)}`);
      return `(${must.join(' AND ')}${not.join('')})`;
    })
    .join(' OR ');
}

/**
 * Text for PostgreSQL's `websearch_to_tsquery('simple', …)`, punctuated like the indexed text: ASCII punctuation
 * becomes spaces (as in the tsvector), except double quotes and a `-` that starts a word.
 */
export function toPgWebsearch(text: string): string {
  // Control characters too: PostgreSQL refuses NUL in text parameters.
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f!#$%&'()*+,./:;<=>?@[\\\]^_`{|}~]/g, ' ').replace(/(?<=[^\s-])-+/g, ' ');
}
