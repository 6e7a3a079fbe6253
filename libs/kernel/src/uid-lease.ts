import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { KernelStartError } from './kernel.errors';
import { claimPidFile, releasePidFile } from './pid-file';

/** Default host-wide directory of uid leases: on tmpfs, so a reboot frees every lease. */
export const DEFAULT_LEASE_DIR = '/run/stoa/uids';

export interface UidLeaseOptions {
  base: number;
  count: number;
  /** Host-wide lease directory shared by every Stoa server on the machine. */
  dir: string;
  /** This server's data dir: its starting offset in the range, so servers rarely probe each other's uids. */
  dataDir: string;
}

/**
 * Kernel uids leased host-wide, so two servers on one machine never hand out the same uid: one lease file
 * per uid (`O_EXCL`, holding the owner's pid), a stale lease (its server is gone) taken over only when no
 * process, zombies included, still runs as that uid. A released uid's leftovers are killed; a uid that
 * still has processes is skipped until they are gone (they would count against the next holder's limits).
 */
export class UidLeases {
  private readonly held = new Set<number>();
  private next: number;

  constructor(private readonly o: UidLeaseOptions) {
    mkdirSync(o.dir, { recursive: true, mode: 0o700 });
    this.next = parseInt(createHash('sha256').update(o.dataDir).digest('hex').slice(0, 8), 16) % o.count;
  }

  /** Leases a free uid or throws when the whole range is taken. */
  acquire(): number {
    const { base, count } = this.o;
    const busy = uidsInUse();
    for (let i = 0; i < count; i++) {
      const uid = base + ((this.next + i) % count);
      if (this.held.has(uid) || busy.has(uid) || !this.claim(uid)) continue;
      this.next = (this.next + i + 1) % count;
      this.held.add(uid);
      return uid;
    }
    throw new KernelStartError(
      `All ${count} kernel uids (sandbox.uid_base ${base}…${base + count - 1}) are leased or still run processes on this host; ` +
        'close sessions, or give this server a range of its own (sandbox.uid_base / sandbox.uid_count).',
    );
  }

  /** Kills whatever still runs as `uid` and gives the lease back. */
  release(uid: number): void {
    if (!this.held.delete(uid)) return;
    for (const pid of pidsOf(uid)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone meanwhile */
      }
    }
    releasePidFile(this.file(uid));
  }

  /** Gives every lease back (shutdown). */
  releaseAll(): void {
    for (const uid of [...this.held]) this.release(uid);
  }

  /** The lease file for `uid`; a dead server's lease is taken over (the caller checked nothing runs as it). */
  private claim(uid: number): boolean {
    return claimPidFile(this.file(uid)) === undefined;
  }

  private file(uid: number): string {
    return join(this.o.dir, String(uid));
  }
}

/** The real uid of every process, zombies included (what RLIMIT_NPROC counts). */
function uidsInUse(): Set<number> {
  const out = new Set<number>();
  for (const [, uid] of processes()) out.add(uid);
  return out;
}

function pidsOf(uid: number): number[] {
  return processes()
    .filter(([, u]) => u === uid)
    .map(([pid]) => pid);
}

function processes(): [pid: number, uid: number][] {
  const out: [number, number][] = [];
  for (const d of readdirSync('/proc')) {
    if (d.charCodeAt(0) < 48 || d.charCodeAt(0) > 57) continue;
    // Not the owner of /proc/<pid>: a process that dropped its uid itself is non-dumpable and shows as root.
    try {
      const m = /\nUid:\s+(\d+)/.exec(readFileSync(`/proc/${d}/status`, 'latin1'));
      if (m) out.push([Number(d), Number(m[1])]);
    } catch {
      /* exited meanwhile */
    }
  }
  return out;
}
