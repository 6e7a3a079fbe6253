import { closeSync, type Dirent, fstatSync, lstatSync, readdirSync } from 'node:fs';
import { lstat, open, readdir } from 'node:fs/promises';
import type { KernelDirs } from '@stoa/kernel';
import { DIR_FLAGS, openKernelDirSync } from '../files/safe-files';
import { lookup } from 'mime-types';

/** A file an execution left in AGORA_OUTPUT_DIR (reference §2.7), as the agent sees it. */
export interface Artifact {
  name: string;
  size_bytes: number;
  mime_type: string;
}

/**
 * Files by relative path. `emptySince`: the directory had no entry at all when listed, and this was its mtime,
 * already older than SETTLED_MS then; while its mtime stays the same no entry was added, so it need not be read.
 * `ino`: the directory's inode then (a directory put in its place is listed again).
 */
export type OutputSnapshot = Map<string, { size: number; mtimeMs: number }> & { emptySince?: number; ino?: number };

/**
 * How far a directory's mtime must lie behind the clock before "unchanged mtime" may stand for "no entry added":
 * timestamps come from a coarse clock (one tick on Linux, up to seconds on some filesystems), so an entry added in
 * the same tick as the listing could leave the mtime as it was.
 */
const SETTLED_MS = 2000;

const MAX_ARTIFACT_BYTES = 500 * 1024 * 1024;
/** An output directory of at most this many entries, all plain files, is listed synchronously (tens of µs). */
const SYNC_ENTRIES = 64;
const HIDDEN_PARTS = new Set(['__pycache__', '.ipynb_checkpoints']);

/** Names never listed: dotfiles, caches, bytecode. */
const hidden = (name: string): boolean => name.startsWith('.') || HIDDEN_PARTS.has(name) || /\.py[co]$/.test(name);

/**
 * Files in the kernel's output directory by relative path with size and mtime (hidden names, bytecode and caches
 * skipped). The walk goes through directory descriptors opened with O_NOFOLLOW, so a kernel that swaps its output
 * directory (or a subdirectory) for a symlink cannot make the server list anything else. A small flat directory
 * (the usual case: a few files, listed after every cell) is read at once — tens of µs, where each awaited call is a
 * thread-pool round trip; anything larger is walked asynchronously.
 */
export async function snapshotOutputs(
  dirs: KernelDirs,
  dir = dirs.outputDir,
  /** The previous snapshot of the same directory: an empty one saves the listing while the directory is unchanged. */
  previous?: OutputSnapshot,
): Promise<OutputSnapshot> {
  if (previous?.emptySince !== undefined && unchangedEmpty(dir, previous)) return previous;
  const out: OutputSnapshot = new Map();
  const root = openKernelDirSync(dirs, dir);
  if (root === undefined) return out;
  try {
    // The mtime is read before the listing: an entry added after it moves the mtime, one added before is listed.
    const st = !previous || previous.size === 0 ? fstatSync(root) : undefined;
    const entries = readdirSync(`/proc/self/fd/${root}`, { withFileTypes: true });
    if (st && entries.length === 0 && Date.now() - st.mtimeMs > SETTLED_MS) {
      out.emptySince = st.mtimeMs;
      out.ino = st.ino;
    }
    if (entries.length <= SYNC_ENTRIES && !entries.some((e) => e.isDirectory())) listFlat(out, root, entries);
    else await walk(out, root, entries, '', 0);
  } catch {
    // discovery never fails an execution
  } finally {
    closeSync(root);
  }
  return out;
}

/**
 * A settled empty directory still in place, its mtime unchanged: one lstat, where listing it opens each directory
 * from the sessions root down. lstat does not follow the last component (the kernel may swap it for a symlink); the
 * ones above it are the server's.
 */
function unchangedEmpty(dir: string, previous: OutputSnapshot): boolean {
  const st = lstatSync(dir, { throwIfNoEntry: false });
  return !!st?.isDirectory() && st.mtimeMs === previous.emptySince && st.ino === previous.ino;
}

function listFlat(out: OutputSnapshot, fd: number, entries: readonly Dirent[]): void {
  for (const e of entries) {
    if (hidden(e.name) || !e.isFile()) continue;
    try {
      const st = lstatSync(`/proc/self/fd/${fd}/${e.name}`, { throwIfNoEntry: false });
      if (st?.isFile()) out.set(e.name, { size: st.size, mtimeMs: st.mtimeMs });
    } catch {
      // an unreadable entry is left out
    }
  }
}

async function walk(
  out: OutputSnapshot,
  fd: number,
  entries: readonly Dirent[],
  prefix: string,
  depth: number,
): Promise<void> {
  const here = `/proc/self/fd/${fd}`;
  for (const e of entries) {
    if (hidden(e.name)) continue;
    const rel = prefix ? `${prefix}/${e.name}` : e.name;
    if (e.isDirectory() && depth < 20) {
      const sub = await open(`${here}/${e.name}`, DIR_FLAGS).catch(() => undefined);
      if (!sub) continue;
      try {
        const inner = await readdir(`/proc/self/fd/${sub.fd}`, { withFileTypes: true }).catch(() => []);
        await walk(out, sub.fd, inner, rel, depth + 1);
      } finally {
        await sub.close();
      }
    } else if (e.isFile()) {
      const st = await lstat(`${here}/${e.name}`).catch(() => undefined);
      if (st?.isFile()) out.set(rel, { size: st.size, mtimeMs: st.mtimeMs });
    }
  }
}

/** Files new or changed since `before` (larger than 500 MiB skipped), sorted by name, and the snapshot they came from. */
export async function changedArtifacts(
  dirs: KernelDirs,
  before: OutputSnapshot,
): Promise<{ artifacts: Artifact[]; after: OutputSnapshot }> {
  const after = await snapshotOutputs(dirs, dirs.outputDir, before);
  const out: Artifact[] = [];
  for (const [name, now] of after) {
    const was = before.get(name);
    if (was && was.size === now.size && was.mtimeMs === now.mtimeMs) continue;
    if (now.size > MAX_ARTIFACT_BYTES) continue;
    out.push({ name, size_bytes: now.size, mime_type: mimeOf(name) });
  }
  return { artifacts: out.sort((a, b) => a.name.localeCompare(b.name)), after };
}

/** The result's `note` when files were written (reference §1.2): where they are and how to share them. */
export function artifactNote(artifacts: readonly Artifact[], server: string): string {
  const names = artifacts.map((a) => a.name).join(', ');
  const first = artifacts[0]?.name ?? 'filename';
  return (
    `${artifacts.length} file(s) saved to AGORA_OUTPUT_DIR: ${names}. ` +
    `Use ${server}_send(data_ref="${first}", to="user") for a shareable download link; the files stay in this session's output directory until the session ends.`
  );
}

/** The MIME type a file name implies; application/octet-stream when it implies none. */
export function mimeOf(name: string): string {
  return lookup(name) || 'application/octet-stream';
}
