import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';

/**
 * Creates `file` holding this process's pid (`O_EXCL`, mode 0600). A file left by a process that is gone is
 * taken over; one held by a live process is not — this one included, unless `ownIsFree` (a lock this process
 * may take again, unlike a lease another part of it holds). `holder` is the live holder's pid when not claimed;
 * `tookOver` says a dead holder's file was replaced.
 */
export function claimPidFile(file: string, ownIsFree = false): { holder?: number; tookOver: boolean } {
  let tookOver = false;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx', 0o600);
      try {
        writeSync(fd, `${process.pid}\n`);
      } finally {
        closeSync(fd);
      }
      return { tookOver };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = holderOf(file);
      if (processAlive(holder) && !(ownIsFree && holder === process.pid)) return { holder, tookOver };
      tookOver = true;
      try {
        unlinkSync(file);
      } catch {
        /* another claimant removed it first: try again */
      }
    }
  }
  return { holder: holderOf(file), tookOver };
}

/** Removes `file` if this process holds it. */
export function releasePidFile(file: string): void {
  try {
    if (holderOf(file) === process.pid) unlinkSync(file);
  } catch {
    /* already gone */
  }
}

function holderOf(file: string): number {
  try {
    return Number(readFileSync(file, 'utf8').trim());
  } catch {
    return 0;
  }
}

/** Whether a process with this pid exists (EPERM: it exists, owned by someone else). */
export function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}
