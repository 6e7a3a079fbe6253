import { closeSync, constants, openSync, realpathSync } from 'node:fs';
import { type FileHandle, open, unlink } from 'node:fs/promises';
import { basename, dirname, isAbsolute, normalize, relative, sep } from 'node:path';
import { InvalidInputError, NotFoundError } from '@stoa/core';
import type { KernelDirs } from '@stoa/kernel';

/**
 * Checks a relative name an agent gave for a file (reference rules: non-blank, not absolute, no `..` segment,
 * backslashes count as slashes) and returns it normalised with `/`.
 */
export function checkRelativeName(name: string, what = 'name'): string {
  const n = (name ?? '').replace(/\\/g, '/').trim();
  if (!n)
    throw new InvalidInputError(
      `The ${what} must not be empty. Give a relative file name such as 'results/table.csv'.`,
    );
  if (n.includes('\0'))
    throw new InvalidInputError(`The ${what} '${name}' contains a NUL byte. Use a plain relative file name.`);
  if (n.startsWith('/') || isAbsolute(n) || /^[A-Za-z]:/.test(n)) {
    throw new InvalidInputError(
      `The ${what} '${name}' is absolute. Give a path relative to the destination, such as 'results/table.csv'.`,
    );
  }
  if (n.split('/').includes('..'))
    throw new InvalidInputError(
      `The ${what} '${name}' contains '..'. Paths may not leave their directory; give a plain relative name.`,
    );
  return n
    .split('/')
    .filter((p) => p && p !== '.')
    .join('/');
}

/** True when `child` is `parent` or below it (both absolute, normalised). */
export function isInside(child: string, parent: string): boolean {
  const rel = relative(parent, child);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
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
  size: number;
  mtimeMs: number;
}

export const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
const FILE_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;

/**
 * The components of `path` below `dirname(dirs.base)` (the server-owned sessions directory), or undefined when
 * `path` is not inside the kernel's base directory.
 */
function kernelParts(dirs: KernelDirs, path: string): string[] | undefined {
  const anchor = dirname(dirs.base);
  const rel = relative(anchor, normalize(path));
  const parts = rel.split(sep);
  if (!rel || isAbsolute(rel) || parts[0] !== basename(dirs.base) || parts.some((p) => !p || p === '.' || p === '..'))
    return undefined;
  return parts;
}

/**
 * Opens the directory chain `parts` below a server-owned `anchor` one component at a time, each with
 * O_NOFOLLOW through the previous descriptor — so no symlink or swapped directory a kernel planted is followed.
 */
async function openChain(anchor: string, parts: readonly string[]): Promise<FileHandle> {
  let dir = await open(anchor, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    for (const p of parts) {
      const next = await open(`/proc/self/fd/${dir.fd}/${p}`, DIR_FLAGS);
      await dir.close();
      dir = next;
    }
    return dir;
  } catch (err) {
    await dir.close();
    throw err;
  }
}

/**
 * Opens a regular file the kernel wrote (`path` inside `dirs.base`) for reading, so that nothing the kernel
 * controls — symlinks, a swapped directory, a hard link to someone else's file — makes the server read outside
 * the kernel's own files. Missing or refused files answer the same NotFoundError.
 */
export async function openKernelFile(dirs: KernelDirs, path: string): Promise<OpenedFile> {
  const missing = new NotFoundError(`File '${basename(path)}' not found.`);
  const parts = kernelParts(dirs, path);
  if (!parts) throw missing;
  let dir: FileHandle | undefined;
  let handle: FileHandle | undefined;
  try {
    dir = await openChain(dirname(dirs.base), parts.slice(0, -1));
    handle = await open(`/proc/self/fd/${dir.fd}/${parts[parts.length - 1]}`, FILE_FLAGS);
    const st = await handle.stat();
    if (!st.isFile() || st.nlink !== 1 || (dirs.uid !== undefined && st.uid !== dirs.uid)) throw missing;
    return { handle, size: st.size, mtimeMs: st.mtimeMs };
  } catch {
    await handle?.close();
    throw missing;
  } finally {
    await dir?.close();
  }
}

/** Deletes a file the kernel wrote (inside `dirs.base`) without following anything the kernel planted. */
export async function unlinkKernelFile(dirs: KernelDirs, path: string): Promise<void> {
  const parts = kernelParts(dirs, path);
  if (!parts) return;
  const dir = await openChain(dirname(dirs.base), parts.slice(0, -1)).catch(() => undefined);
  if (!dir) return;
  try {
    await unlink(`/proc/self/fd/${dir.fd}/${parts[parts.length - 1]}`).catch(() => undefined);
  } finally {
    await dir.close();
  }
}

/**
 * A real (not symlinked) directory inside the kernel's base, opened for listing: its file descriptor (the caller
 * closes it), or undefined. Synchronous: it is opened after every cell, and the chain's few opens take µs at once
 * where each awaited one is a thread-pool round trip (~0.3 ms).
 */
export function openKernelDirSync(dirs: KernelDirs, path: string): number | undefined {
  const parts = kernelParts(dirs, path);
  if (!parts) return undefined;
  let fd: number | undefined;
  try {
    fd = openSync(dirname(dirs.base), constants.O_RDONLY | constants.O_DIRECTORY);
    for (const p of parts) {
      const next = openSync(`/proc/self/fd/${fd}/${p}`, DIR_FLAGS);
      closeSync(fd);
      fd = next;
    }
    return fd;
  } catch {
    if (fd !== undefined) closeSync(fd);
    return undefined;
  }
}
