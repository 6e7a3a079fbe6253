import { distance as editDistance } from 'fastest-levenshtein';

/**
 * Namespacing of tool names in the merged catalog: `${server}__${tool}`.
 * `__` keeps qualified names inside `[A-Za-z0-9_-]` (valid for MCP and for LLM function-calling APIs that
 * reject `.`); server names may not contain `__` or start/end with `_`, so the first `__` always splits.
 */
export const TOOL_NAME_SEPARATOR = '__';

/** Allowed server names: letters, digits, `-`, and single inner underscores. */
export const SERVER_NAME_PATTERN = /^[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*$/;

/** `alpha` + `execute_alpha_code` → `alpha__execute_alpha_code`. */
export function qualifyToolName(server: string, tool: string): string {
  return `${server}${TOOL_NAME_SEPARATOR}${tool}`;
}

/** Splits at the first separator; undefined when there is none. */
export function splitQualifiedName(qualified: string): { server: string; tool: string } | undefined {
  const at = qualified.indexOf(TOOL_NAME_SEPARATOR);
  if (at <= 0) return undefined;
  return { server: qualified.slice(0, at), tool: qualified.slice(at + TOOL_NAME_SEPARATOR.length) };
}

/**
 * Up to `limit` candidates that look like `input`: an exact match of the unqualified part first, then
 * substring matches, then small edit distances (typos).
 */
export function closeMatches(input: string, candidates: readonly string[], limit = 5): string[] {
  const wanted = input.toLowerCase();
  const bare = splitQualifiedName(wanted)?.tool ?? wanted;
  const scored = candidates.map((candidate) => {
    const c = candidate.toLowerCase();
    const tool = splitQualifiedName(c)?.tool ?? c;
    if (tool === bare) return { candidate, score: 0 };
    if (c.includes(bare) || (tool.length >= 4 && bare.includes(tool))) return { candidate, score: 1 };
    const distance = Math.min(editDistance(c, wanted), editDistance(tool, bare));
    return { candidate, score: distance <= Math.max(2, Math.floor(bare.length / 4)) ? 1 + distance : Infinity };
  });
  return scored
    .filter((s) => Number.isFinite(s.score))
    .sort((a, b) => a.score - b.score || a.candidate.localeCompare(b.candidate))
    .slice(0, limit)
    .map((s) => s.candidate);
}
