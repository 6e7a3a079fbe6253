import { constants, type Dirent } from 'node:fs';
import { type FileHandle, lstat, open, readdir } from 'node:fs/promises';
import type { KernelDirs } from '@stoa/kernel';
import { openKernelDir } from '../files/safe-files';
import { lookup } from 'mime-types';

/** A file an execution left in AGORA_OUTPUT_DIR (reference §2.7), as the agent sees it. */
export interface Artifact {
  name: string;
  size_bytes: number;
  mime_type: string;
}

export type OutputSnapshot = Map<string, { size: number; mtimeMs: number }>;

const MAX_ARTIFACT_BYTES = 500 * 1024 * 1024;
const HIDDEN_PARTS = new Set(['__pycache__', '.ipynb_checkpoints']);

/**
 * Files in the kernel's output directory by relative path with size and mtime (hidden names, bytecode and caches
 * skipped). The walk goes through directory descriptors opened with O_NOFOLLOW, so a kernel that swaps its output
 * directory (or a subdirectory) for a symlink cannot make the server list anything else.
 */
export async function snapshotOutputs(dirs: KernelDirs, dir = dirs.outputDir): Promise<OutputSnapshot> {
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
        const sub = await open(`${here}/${e.name}`, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW).catch(() => undefined);
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

/** Files new or changed since `before` (larger than 500 MiB skipped), sorted by name. */
export async function changedArtifacts(dirs: KernelDirs, before: OutputSnapshot): Promise<Artifact[]> {
  const after = await snapshotOutputs(dirs);
  const out: Artifact[] = [];
  for (const [name, now] of after) {
    const was = before.get(name);
    if (was && was.size === now.size && was.mtimeMs === now.mtimeMs) continue;
    if (now.size > MAX_ARTIFACT_BYTES) continue;
    out.push({ name, size_bytes: now.size, mime_type: lookup(name) || 'application/octet-stream' });
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
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
