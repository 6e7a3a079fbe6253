import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { KernelStartError } from './kernel.errors';
import { claimPidFile, releasePidFile } from './pid-file';

/**
 * One server per data dir: at start a server removes the kernel directories it finds there (a previous
 * run's), which would wreck a second live server's sessions. `{dataDir}/.stoa.lock` holds the owner's pid;
 * a lock whose process is gone is taken over.
 */
export function lockDataDir(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, '.stoa.lock');
  const owner = claimPidFile(file, true).holder;
  if (owner !== undefined) {
    throw new KernelStartError(
      `The data dir ${dataDir} is in use by another Stoa server (pid ${owner}). Give each server its own data_dir ` +
        `(STOA_DATA_DIR), or stop the other one. If no such server runs, remove ${file}.`,
    );
  }
  return () => releasePidFile(file);
}
