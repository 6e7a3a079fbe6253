import { chmod, chown, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { KernelDirs } from '@stoa/kernel';

/** Creates a directory the kernel (its own uid when the server runs as root) can use. */
export async function kernelDir(dirs: KernelDirs, ...parts: string[]): Promise<string> {
  let d = dirs.transferDir; // `{workDir}/.stoa`: hidden, so never listed as artifacts
  for (const p of ['', ...parts]) {
    d = p ? join(d, p) : d;
    await mkdir(d, { recursive: true, mode: 0o700 });
    if (dirs.uid !== undefined) await chown(d, dirs.uid, dirs.uid);
  }
  return d;
}

/** Hands a file the host wrote to the kernel (owned by its uid, readable by it only). */
export async function giveFile(path: string, dirs: KernelDirs): Promise<void> {
  if (dirs.uid !== undefined) await chown(path, dirs.uid, dirs.uid);
  await chmod(path, 0o600);
}
