import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { KernelStartError } from './kernel.errors';

/**
 * One server per data dir: at start a server removes the kernel directories it finds there (a previous
 * run's), which would wreck a second live server's sessions. `{dataDir}/.stoa.lock` holds the owner's pid;
 * a lock whose process is gone is taken over.
 */
export function lockDataDir(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, '.stoa.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx', 0o600);
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      return () => {
        try {
          if (readFileSync(file, 'utf8').trim() === String(process.pid)) unlinkSync(file);
        } catch {
          /* already gone */
        }
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = Number(readFileSync(file, 'utf8').trim());
      if (owner !== process.pid && alive(owner)) {
        throw new KernelStartError(
          `The data dir ${dataDir} is in use by another Stoa server (pid ${owner}). Give each server its own data_dir ` +
            `(STOA_DATA_DIR), or stop the other one. If no such server runs, remove ${file}.`,
        );
      }
      unlinkSync(file);
    }
  }
  throw new KernelStartError(`Could not lock the data dir ${dataDir} (${file} keeps reappearing): is another server starting there?`);
}

function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}
