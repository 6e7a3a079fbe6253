import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { KernelStartError } from './kernel.errors';
import { claimPidFile, releasePidFile } from './pid-file';

/** Default host-wide directory of uid leases: on tmpfs, so a reboot frees every lease. */
export const DEFAULT_LEASE_DIR = '/run/stoa/uids';

/** How long a scan of the host's processes stands for the present when picking a uid (see `acquire`). */
const SCAN_FRESH_MS = 2000;

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
 * process, zombies included, still runs as that uid. A released uid's leftovers are killed and the lease is given
 * back only once none is left; a uid that still has processes is skipped until they are gone (they would count
 * against the next holder's limits).
 *
 * Finding the processes of a uid means a look at every process of the host (one stat of /proc/<pid> each, ~10 µs on
 * a VM: 0.6–1.4 ms of blocked event loop with 84 processes, 7–9 ms with 780, i.e. ~200 idle sessions). A release
 * does it unless its caller has seen the uid's processes gone (their cgroup removed), and `acquire` picks from the
 * latest scan while it is fresh, scanning again only when it is not, when it takes over a stale lease, or before it
 * gives up. A uid without a lease gets no new process after that scan: only a lease holder starts processes as a
 * kernel uid, and a release kills what is left first.
 */
export class UidLeases {
  private readonly held = new Set<number>();
  private next: number;
  private scan: { at: number; busy: Set<number> } | undefined;
  private scanCount = 0;

  constructor(private readonly o: UidLeaseOptions) {
    mkdirSync(o.dir, { recursive: true, mode: 0o700 });
    this.next = parseInt(createHash('sha256').update(o.dataDir).digest('hex').slice(0, 8), 16) % o.count;
  }

  /** Leases a free uid or throws when the whole range is taken. */
  acquire(): number {
    const fresh = this.scan && performance.now() - this.scan.at < SCAN_FRESH_MS ? this.scan.busy : undefined;
    const uid = this.pick(fresh ?? this.scanNow().busy) ?? (fresh && this.pick(this.scanNow().busy));
    if (uid === undefined) {
      const { base, count } = this.o;
      throw new KernelStartError(
        `All ${count} kernel uids (sandbox.uid_base ${base}…${base + count - 1}) are leased or still run processes on this host; ` +
          'close sessions, or give this server a range of its own (sandbox.uid_base / sandbox.uid_count).',
      );
    }
    return uid;
  }

  /**
   * Kills whatever still runs as `uid` and gives the lease back. `vacated`: the caller has seen that nothing runs as
   * `uid` any more (every process it started as `uid` was in a cgroup that has since been removed, so it is gone),
   * and the look at every process of the host is skipped; `acquire` still checks its latest scan before reuse.
   */
  release(uid: number, vacated = false): void {
    if (!this.held.delete(uid)) return;
    if (!vacated) {
      const { procs } = this.scanNow();
      killAll(procs.filter(([, u]) => u === uid).map(([pid]) => pid));
    }
    releasePidFile(this.file(uid));
  }

  /** How many times this looked at every process of the host (each look: ~8 ms of blocked event loop at 800). */
  get scans(): number {
    return this.scanCount;
  }

  /** Gives every lease back (shutdown). */
  releaseAll(): void {
    for (const uid of [...this.held]) this.release(uid);
  }

  private pick(busy: Set<number>): number | undefined {
    const { base, count } = this.o;
    for (let i = 0; i < count; i++) {
      const uid = base + ((this.next + i) % count);
      if (this.held.has(uid) || busy.has(uid)) continue;
      const claim = claimPidFile(this.file(uid));
      if (claim.holder !== undefined) continue;
      // A dead server's lease: its kernels may have outlived it, so look now, whatever the last scan said.
      if (claim.tookOver && this.scanNow().busy.has(uid)) {
        releasePidFile(this.file(uid));
        continue;
      }
      this.next = (this.next + i + 1) % count;
      this.held.add(uid);
      return uid;
    }
    return undefined;
  }

  /** Looks at every process of the host, remembered as the latest scan: each process with its uid, and the uids. */
  private scanNow(): { procs: [pid: number, uid: number][]; busy: Set<number> } {
    const at = performance.now();
    const procs = processes();
    this.scanCount++;
    this.scan = { at, busy: new Set(procs.map(([, uid]) => uid)) };
    return { procs, busy: this.scan.busy };
  }

  private file(uid: number): string {
    return join(this.o.dir, String(uid));
  }
}

function killAll(pids: number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone meanwhile */
    }
  }
}

/** The uid of every process, zombies included (what RLIMIT_NPROC counts): the owner of its /proc directory. */
function processes(): [pid: number, uid: number][] {
  const out: [number, number][] = [];
  for (const d of readdirSync('/proc')) {
    const c = d.charCodeAt(0);
    if (c < 48 || c > 57) continue;
    // The directory's owner is the process's effective uid (dumpable or not, zombie or not); a kernel's real and
    // effective uids are one (it cannot gain privileges), and one stat costs a quarter of reading its status.
    const st = statSync(`/proc/${d}`, { throwIfNoEntry: false });
    if (st) out.push([Number(d), st.uid]);
  }
  return out;
}
