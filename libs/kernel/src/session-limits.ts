import { lstatSync, readdirSync } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { CgroupCounters, Cgroups, SessionCgroup } from './cgroup';
import type { KernelProcess } from './kernel-process';
import type { KernelExecution } from './kernel.types';
import type { SandboxConfig } from './sandbox.config';

const MiB = 1024 * 1024;

/** Bytes allocated on disk and entries (files, directories, links) under a directory. */
export interface DiskUsage {
  bytes: number;
  files: number;
}

/** A session directory's use as last measured, and when (performance.now()); kept per kernel between cells. */
export interface MeasuredUse {
  usage?: DiskUsage;
  at?: number;
}

/**
 * The fastest a session could grow its directory (all its processes together), for skipping a walk that could not
 * find it over the quota: 8 GiB/s (a tmpfs memcpy) and a million new entries per second. Generous on purpose.
 */
const MAX_GROWTH = { bytesPerMs: (8 * 1024 * MiB) / 1000, filesPerMs: 1000 };

/** Entries a synchronous walk may visit before the walk goes asynchronous (small dirs: no thread-pool round trips). */
const SYNC_WALK_ENTRIES = 500;

/**
 * Measures `dir` (no symlinks followed), stopping early once `stopAtFiles` entries were seen. A session directory
 * is usually small and walked synchronously (a few µs); a large one a level at a time off the event loop.
 */
export async function diskUsage(dir: string, stopAtFiles = Infinity): Promise<DiskUsage> {
  return smallDiskUsage(dir, Math.min(stopAtFiles, SYNC_WALK_ENTRIES)) ?? (await largeDiskUsage(dir, stopAtFiles));
}

/** The synchronous walk, or undefined once it met more than `budget` entries. */
function smallDiskUsage(dir: string, budget: number): DiskUsage | undefined {
  const total: DiskUsage = { bytes: 0, files: 0 };
  const queue = [dir];
  while (queue.length) {
    const d = queue.pop()!;
    let names: string[];
    try {
      names = readdirSync(d);
    } catch {
      continue;
    }
    for (const n of names) {
      if (++total.files > budget) return undefined;
      const st = lstatSync(join(d, n), { throwIfNoEntry: false });
      if (!st) continue;
      total.bytes += st.blocks * 512;
      if (st.isDirectory()) queue.push(join(d, n));
    }
  }
  return total;
}

async function largeDiskUsage(dir: string, stopAtFiles: number): Promise<DiskUsage> {
  const total: DiskUsage = { bytes: 0, files: 0 };
  let level = [dir];
  while (level.length && total.files < stopAtFiles) {
    const listed = await Promise.all(
      level.map((d) =>
        readdir(d).then(
          (names) => names.map((n) => join(d, n)),
          () => [] as string[],
        ),
      ),
    );
    const paths = listed.flat().slice(0, Math.max(0, stopAtFiles - total.files));
    const stats = await Promise.all(paths.map((p) => lstat(p).catch(() => undefined)));
    level = [];
    stats.forEach((st, i) => {
      if (!st) return; // removed meanwhile
      total.files++;
      total.bytes += st.blocks * 512;
      if (st.isDirectory()) level.push(paths[i]!);
    });
  }
  return total;
}

/** Which per-process and per-session limits are enforced (for logs and /health), and why one asked for is not. */
export function describeLimits(
  l: SandboxConfig['limits'],
  cgroups: Cgroups,
  privateTmp: boolean,
): Record<string, string> {
  const cg = cgroups.active();
  const off = (key: string, why?: string) => `off (${why ?? `sandbox.limits.${key}: 0`})`;
  return {
    process_memory: l.memory_mb ? `${l.memory_mb} MiB address space per process (RLIMIT_AS)` : off('memory_mb'),
    session_memory:
      cg.memory ?? off('session_memory_mb', l.session_memory_mb ? cgroups.inactive.get('memory') : undefined),
    session_processes:
      cg.pids ?? off('session_processes', l.session_processes ? cgroups.inactive.get('pids') : undefined),
    tmp: !privateTmp
      ? 'host /tmp (no private /tmp: needs bubblewrap with sandbox.network: none or filesystem: confined)'
      : l.tmp_size_mb
        ? `private tmpfs of ${l.tmp_size_mb} MiB`
        : 'private tmpfs, unbounded (sandbox.limits.tmp_size_mb: 0)',
    disk:
      l.disk_mb || l.disk_files
        ? `${l.disk_mb || 'unlimited'} MiB / ${l.disk_files || 'unlimited'} files per session directory, measured after each cell (back-to-back cells that cannot have reached it share one walk) and every ${l.disk_check_ms} ms during one`
        : off('disk_mb'),
  };
}

/**
 * Enforces a session's caps around one cell: the disk quota of its directory (measured on a timer while the cell
 * runs; a cell that grows it past the quota is interrupted, then killed if it goes on) and, after the cell, what the
 * session's cgroup counted (processes ended by the OOM killer, forks refused). The notes say what happened.
 */
export async function guardCell(
  limits: SandboxConfig['limits'],
  kernel: KernelProcess,
  base: string,
  cgroup: SessionCgroup | undefined,
  run: () => Promise<KernelExecution>,
  /** The directory's use as last measured for this kernel (saves walks); updated here. */
  last: MeasuredUse,
): Promise<KernelExecution> {
  // The counters as the previous cell left them: read once per cell, after it.
  const before = cgroup?.previous;
  const quota = limits.disk_mb || limits.disk_files ? new DiskQuota(limits, base, kernel, last) : undefined;
  await quota?.start();
  let result: KernelExecution;
  try {
    result = await run();
  } finally {
    quota?.stop();
  }
  const notes = [
    ...(before && cgroup ? cgroupNotes(limits, before, cgroup.counters()) : []),
    ...((await quota?.finish()) ?? []),
  ];
  return notes.length ? { ...result, limitNotes: notes } : result;
}

function cgroupNotes(limits: SandboxConfig['limits'], before: CgroupCounters, after: CgroupCounters): string[] {
  const notes: string[] = [];
  const oom = after.oomKills - before.oomKills;
  const forks = after.pidsRefused - before.pidsRefused;
  if (oom > 0) {
    notes.push(
      `The session's memory cap (${limits.session_memory_mb} MiB for all its processes and its /tmp together, sandbox.limits.session_memory_mb) was reached: ` +
        `the out-of-memory killer ended ${oom} process${oom === 1 ? '' : 'es'} of this session during this cell (or since the previous one). ` +
        'Use less memory at once (work in chunks, free large objects with del, fewer parallel workers) or ask the operator to raise the cap.',
    );
  }
  if (forks > 0) {
    notes.push(
      `The session's process cap (${limits.session_processes} processes and threads, sandbox.limits.session_processes) was reached: ` +
        `${forks} attempt${forks === 1 ? '' : 's'} to start a process or thread failed during this cell (or since the previous one). Use fewer workers or threads, and end the processes you start.`,
    );
  }
  return notes;
}

/** The disk quota of one session directory for the length of one cell. */
class DiskQuota {
  private startUsage: DiskUsage = { bytes: 0, files: 0 };
  private last: DiskUsage = { bytes: 0, files: 0 };
  private timer: NodeJS.Timeout | undefined;
  private measuring = false;
  private strikes = 0;
  private action: 'interrupted' | 'killed' | undefined;

  constructor(
    private readonly limits: SandboxConfig['limits'],
    private readonly base: string,
    private readonly kernel: KernelProcess,
    private readonly previous: MeasuredUse,
  ) {}

  async start(): Promise<void> {
    if (!this.previous.usage) {
      this.previous.usage = await this.measure();
      this.previous.at = performance.now();
    }
    this.startUsage = this.last = this.previous.usage;
    this.timer = setInterval(() => void this.tick(), this.limits.disk_check_ms);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /**
   * After the cell: a note when it left the directory over the quota (and grew it). The directory is walked unless
   * the time since its last walk is too short to have filled the headroom even at MAX_GROWTH (and under
   * disk_check_ms): back-to-back cells share a walk, a cell after a pause gets its own, one near the quota too.
   */
  async finish(): Promise<string[]> {
    if (!this.action && this.mayskip()) return [];
    const now = await this.measure();
    this.previous.usage = now;
    this.previous.at = performance.now();
    if (!this.action && !(this.over(now) && this.grew(now))) return [];
    const what =
      this.action === 'killed'
        ? 'the cell went on writing after the interrupt, so the kernel was killed and its variables are lost'
        : this.action === 'interrupted'
          ? 'the cell was interrupted'
          : 'the files the cell wrote are kept, but cells that add more while the directory is over the quota are interrupted';
    return [
      `The session's directory (work/ and outputs/) uses ${this.describe(now)}, over its disk quota of ${this.describeQuota()} (sandbox.limits.disk_mb / disk_files): ${what}. ` +
        'Delete files you no longer need (os.remove, shutil.rmtree) to get back under the quota, or ask the operator to raise it.',
    ];
  }

  private async tick(): Promise<void> {
    if (this.measuring || this.action === 'killed') return;
    this.measuring = true;
    try {
      const now = await this.measure();
      const growing = now.bytes > this.last.bytes || now.files > this.last.files;
      this.last = now;
      if (!this.over(now) || !this.grew(now)) return;
      if (!this.action) {
        this.action = 'interrupted';
        this.kernel.interrupt();
      } else if (growing && ++this.strikes >= 2) {
        // Still writing after the interrupt (KeyboardInterrupt caught, or a child process): end the kernel.
        this.action = 'killed';
        this.kernel.kill();
      }
    } finally {
      this.measuring = false;
    }
  }

  private mayskip(): boolean {
    const { usage, at } = this.previous;
    if (!usage || at === undefined) return false;
    const elapsed = performance.now() - at;
    if (elapsed >= this.limits.disk_check_ms) return false;
    const { disk_mb: mb, disk_files: files } = this.limits;
    return (
      (!mb || usage.bytes + elapsed * MAX_GROWTH.bytesPerMs < mb * MiB) &&
      (!files || usage.files + elapsed * MAX_GROWTH.filesPerMs < files)
    );
  }

  private measure(): Promise<DiskUsage> {
    return diskUsage(this.base, this.limits.disk_files ? this.limits.disk_files + 1 : Infinity);
  }

  private over(u: DiskUsage): boolean {
    return (
      (!!this.limits.disk_mb && u.bytes > this.limits.disk_mb * MiB) ||
      (!!this.limits.disk_files && u.files > this.limits.disk_files)
    );
  }

  private grew(u: DiskUsage): boolean {
    return u.bytes > this.startUsage.bytes || u.files > this.startUsage.files;
  }

  private describe(u: DiskUsage): string {
    return `${Math.round(u.bytes / MiB)} MiB in ${u.files}${this.limits.disk_files && u.files > this.limits.disk_files ? '+' : ''} files`;
  }

  private describeQuota(): string {
    return `${this.limits.disk_mb ? `${this.limits.disk_mb} MiB` : 'unlimited MiB'} and ${this.limits.disk_files || 'unlimited'} files`;
  }
}
