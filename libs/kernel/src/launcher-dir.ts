import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { processAlive } from './pid-file';

/** Longest unix socket path Linux takes (sun_path is 108 bytes with its NUL). */
const MAX_SOCKET_PATH = 107;
const PREFIX = 'stoa-launch-';

/**
 * A private (0700) directory for the kernel launcher's socket, named after this process
 * (`stoa-launch-<pid>-XXXXXX` under $TMPDIR, or /tmp when that path would be too long for a socket). Directories a
 * server of this user left behind when it was killed (its pid is gone) are removed first.
 */
export function launcherSocketDir(): string {
  const base = join(tmpdir(), `${PREFIX}${process.pid}-XXXXXX`, 'l.sock').length <= MAX_SOCKET_PATH ? tmpdir() : '/tmp';
  removeStale(base);
  return mkdtempSync(join(base, `${PREFIX}${process.pid}-`));
}

function removeStale(base: string): void {
  let names: string[];
  try {
    names = readdirSync(base).filter((n) => n.startsWith(PREFIX));
  } catch {
    return;
  }
  const uid = process.getuid?.();
  for (const name of names) {
    const pid = Number(/^stoa-launch-(\d+)-/.exec(name)?.[1]);
    if (!pid || pid === process.pid || processAlive(pid)) continue;
    const dir = join(base, name);
    try {
      if (statSync(dir).uid === uid) rmSync(dir, { recursive: true, force: true });
    } catch {
      /* gone meanwhile, or not ours to remove */
    }
  }
}
