import { constants, realpathSync } from 'node:fs';
import { type FileHandle, open, readlink, realpath } from 'node:fs/promises';
import { isAbsolute, join, normalize, relative, sep } from 'node:path';
import { InvalidInputError, NotFoundError } from '@stoa/core';

/**
 * Checks a relative name an agent gave for a file (reference rules: non-blank, not absolute, no `..` segment,
 * backslashes count as slashes) and returns it normalised with `/`.
 */
export function checkRelativeName(name: string, what = 'name'): string {
  const n = (name ?? '').replace(/\\/g, '/').trim();
  if (!n) throw new InvalidInputError(`The ${what} must not be empty. Give a relative file name such as 'results/table.csv'.`);
  if (n.includes('\0')) throw new InvalidInputError(`The ${what} '${name}' contains a NUL byte. Use a plain relative file name.`);
  if (n.startsWith('/') || isAbsolute(n) || /^[A-Za-z]:/.test(n)) {
    throw new InvalidInputError(`The ${what} '${name}' is absolute. Give a path relative to the destination, such as 'results/table.csv'.`);
  }
  if (n.split('/').includes('..')) throw new InvalidInputError(`The ${what} '${name}' contains '..'. Paths may not leave their directory; give a plain relative name.`);
  return n.split('/').filter((p) => p && p !== '.').join('/');
}

/** True when `child` is `parent` or below it (both absolute, normalised). */
export function isInside(child: string, parent: string): boolean {
  const rel = relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel) && !rel.startsWith(sep));
}

/** `realpath` that answers undefined for missing paths. */
export function realpathOrUndefined(p: string): string | undefined {
  try {
    return realpathSync(p);
  } catch {
    return undefined;
  }
}

export interface OpenedFile {
  handle: FileHandle;
  /** The real path that was opened (no symlinks). */
  path: string;
  size: number;
  mtimeMs: number;
}

/**
 * Opens a regular file `rel` inside `base` for reading so that nothing a kernel wrote — a symlink, a swapped
 * directory, a hard link — can make the server read a file outside `base`: the path is resolved, opened with
 * O_NOFOLLOW, and the descriptor's own path (/proc/self/fd) is checked again after opening.
 */
export async function openInside(base: string, rel: string): Promise<OpenedFile> {
  const root = await realpath(base).catch(() => undefined);
  const missing = () => new NotFoundError(`File '${rel}' not found.`);
  if (!root) throw missing();
  const wanted = normalize(join(root, rel));
  if (!isInside(wanted, root)) throw missing();
  const real = await realpath(wanted).catch(() => undefined);
  if (!real || !isInside(real, root)) throw missing();
  let handle: FileHandle;
  try {
    handle = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    throw missing();
  }
  try {
    const st = await handle.stat();
    const actual = await readlink(`/proc/self/fd/${handle.fd}`).catch(() => real);
    if (!st.isFile() || st.nlink > 1 || !isInside(actual, root)) throw missing();
    return { handle, path: actual, size: st.size, mtimeMs: st.mtimeMs };
  } catch (err) {
    await handle.close();
    throw err;
  }
}
