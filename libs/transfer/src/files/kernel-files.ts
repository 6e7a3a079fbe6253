import { chown, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { KernelDirs } from '@stoa/kernel';

/**
 * A directory in the kernel's inbox (server-owned, read-only for the kernel) for files the host hands over:
 * the kernel cannot plant symlinks or swap directories there, so host writes land where they are meant to.
 */
export async function kernelDir(dirs: KernelDirs, ...parts: string[]): Promise<string> {
  let d = dirs.inboxDir;
  for (const p of parts) {
    d = join(d, p);
    await mkdir(d, { recursive: true, mode: 0o750 });
    if (dirs.uid !== undefined) await chown(d, process.getuid?.() ?? 0, dirs.uid);
  }
  return d;
}
