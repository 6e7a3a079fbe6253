import type { Dirent } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
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

/** Files under `dir` by relative path with size and mtime (hidden names, bytecode and caches skipped). */
export async function snapshotOutputs(dir: string): Promise<OutputSnapshot> {
  const out: OutputSnapshot = new Map();
  const walk = async (d: string, depth: number): Promise<void> => {
    let entries: Dirent[];
    try {
      entries = await readdir(d, { withFileTypes: true });
    } catch {
      return; // discovery never fails an execution
    }
    for (const e of entries) {
      if (e.name.startsWith('.') || HIDDEN_PARTS.has(e.name)) continue;
      const full = join(d, e.name);
      if (e.isDirectory() && depth < 20) await walk(full, depth + 1);
      else if (e.isFile() && !/\.py[co]$/.test(e.name)) {
        const st = await stat(full).catch(() => undefined);
        if (st) out.set(relative(dir, full).split(sep).join('/'), { size: st.size, mtimeMs: st.mtimeMs });
      }
    }
  };
  await walk(dir, 0);
  return out;
}

/** Files new or changed since `before` (larger than 500 MiB skipped), sorted by name. */
export async function changedArtifacts(dir: string, before: OutputSnapshot): Promise<Artifact[]> {
  const after = await snapshotOutputs(dir);
  const out: Artifact[] = [];
  for (const [name, now] of after) {
    const was = before.get(name);
    if (was && was.size === now.size && was.mtimeMs === now.mtimeMs) continue;
    if (now.size > MAX_ARTIFACT_BYTES) continue;
    out.push({ name, size_bytes: now.size, mime_type: lookup(name) || 'application/octet-stream' });
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

/** The result's `note` when files were written (reference §1.2). */
export function artifactNote(artifacts: readonly Artifact[]): string {
  const names = artifacts.map((a) => a.name).join(', ');
  return `${artifacts.length} file(s) saved to AGORA_OUTPUT_DIR: ${names}. They stay in this session's output directory (agora_output('name') gives the path) until the session ends.`;
}
