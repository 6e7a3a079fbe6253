import { closeSync, constants, type Dirent, lstatSync, readdirSync } from 'node:fs';
import { type FileHandle, lstat, open, readdir } from 'node:fs/promises';
import type { KernelDirs } from '@stoa/kernel';
import { openKernelDir, openKernelDirSync } from '../files/safe-files';
import { lookup } from 'mime-types';

/** A file an execution left in AGORA_OUTPUT_DIR (reference §2.7), as the agent sees it. */
export interface Artifact {
  name: string;
  size_bytes: number;
  mime_type: string;
}

export type OutputSnapshot = Map<string, { size: number; mtimeMs: number }>;

const MAX_ARTIFACT_BYTES = 500 * 1024 * 1024;
/** An output directory of at most this many entries, all plain files, is listed synchronously (tens of µs). */
const SYNC_ENTRIES = 64;
const HIDDEN_PARTS = new Set(['__pycache__', '.ipynb_checkpoints']);

/**
 * Files in the kernel's output directory by relative path with size and mtime (hidden names, bytecode and caches
 * skipped). The walk goes through directory descriptors opened with O_NOFOLLOW, so a kernel that swaps its output
 * directory (or a subdirectory) for a symlink cannot make the server list anything else.
 */
export async function snapshotOutputs(dirs: KernelDirs, dir = dirs.outputDir): Promise<OutputSnapshot> {
  const small = smallSnapshot(dirs, dir);
  if (small) return small;
  const out: OutputSnapshot = new Map();
  const walk = async (handle: FileHandle, prefix: string, depth: number): Promise<void> => {
    const here = `/proc/self/fd/${handle.fd}`;
    let entries: Dirent[];
    try {
      entries = await readdir(here, { withFileTypes: true });
    } catch {
      return; // discovery never fails an execution
    }
    for (const e of entries) {
      if (e.name.startsWith('.') || HIDDEN_PARTS.has(e.name)) continue;
      const rel = prefix ? `${prefix}/${e.name}` : e.name;
      if (e.isDirectory() && depth < 20) {
        const sub = await open(
          `${here}/${e.name}`,
          constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW,
        ).catch(() => undefined);
        if (!sub) continue;
        try {
          await walk(sub, rel, depth + 1);
        } finally {
          await sub.close();
        }
      } else if (e.isFile() && !/\.py[co]$/.test(e.name)) {
        const st = await lstat(`${here}/${e.name}`).catch(() => undefined);
        if (st?.isFile()) out.set(rel, { size: st.size, mtimeMs: st.mtimeMs });
      }
    }
  };
  const root = await openKernelDir(dirs, dir);
  if (!root) return out;
  try {
    await walk(root, '', 0);
  } finally {
    await root.close();
  }
  return out;
}

/**
 * The snapshot of a small, flat output directory (the usual case: a few files), read at once; undefined when the
 * directory has subdirectories or more than SYNC_ENTRIES entries, which the awaited walk handles.
 */
function smallSnapshot(dirs: KernelDirs, dir: string): OutputSnapshot | undefined {
  const fd = openKernelDirSync(dirs, dir);
  if (fd === undefined) return new Map();
  try {
    const here = `/proc/self/fd/${fd}`;
    const entries = readdirSync(here, { withFileTypes: true });
    if (entries.length > SYNC_ENTRIES || entries.some((e) => e.isDirectory())) return undefined;
    const out: OutputSnapshot = new Map();
    for (const e of entries) {
      if (e.name.startsWith('.') || HIDDEN_PARTS.has(e.name) || !e.isFile() || /\.py[co]$/.test(e.name)) continue;
      const st = lstatSync(`${here}/${e.name}`, { throwIfNoEntry: false });
      if (st?.isFile()) out.set(e.name, { size: st.size, mtimeMs: st.mtimeMs });
    }
    return out;
  } catch {
    return new Map(); // discovery never fails an execution
  } finally {
    closeSync(fd);
  }
}

/** Files new or changed since `before` (larger than 500 MiB skipped), sorted by name, and the snapshot they came from. */
export async function changedArtifacts(
  dirs: KernelDirs,
  before: OutputSnapshot,
): Promise<{ artifacts: Artifact[]; after: OutputSnapshot }> {
  const after = await snapshotOutputs(dirs);
  const out: Artifact[] = [];
  for (const [name, now] of after) {
    const was = before.get(name);
    if (was && was.size === now.size && was.mtimeMs === now.mtimeMs) continue;
    if (now.size > MAX_ARTIFACT_BYTES) continue;
    out.push({ name, size_bytes: now.size, mime_type: lookup(name) || 'application/octet-stream' });
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
