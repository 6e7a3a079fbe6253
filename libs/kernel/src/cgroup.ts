import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { CgroupCounter } from './cgroup-counter';
import { type Controller, discoverHierarchies, type Hierarchy, readText } from './cgroup-hierarchy';
import { KernelStartError } from './kernel.errors';
import { processAlive } from './pid-file';

export interface CgroupCaps {
  memoryBytes: number;
  pids: number;
}

/** Counters of one session cgroup: processes ended by the OOM killer, fork/clone calls refused by pids.max. */
export interface CgroupCounters {
  oomKills: number;
  pidsRefused: number;
}

/**
 * One kernel's cgroup(s): one directory in a v2 hierarchy, or one per v1 controller. Its processes join it
 * before they exec (see `procs`), so every child they fork is inside too.
 */
export class SessionCgroup {
  private readonly oom: CgroupCounter | undefined;
  private readonly forks: CgroupCounter | undefined;
  private last: CgroupCounters = { oomKills: 0, pidsRefused: 0 };

  constructor(private readonly dirs: ReadonlyMap<Controller, { dir: string; version: 1 | 2 }>) {
    const mem = dirs.get('memory');
    const pids = dirs.get('pids');
    this.oom =
      mem && new CgroupCounter(join(mem.dir, mem.version === 2 ? 'memory.events' : 'memory.oom_control'), 'oom_kill');
    this.forks = pids && new CgroupCounter(join(pids.dir, 'pids.events'), 'max');
  }

  /** The `cgroup.procs` files a process writes its pid into to join (one per distinct directory). */
  get procs(): string[] {
    return [...new Set([...this.dirs.values()].map((d) => join(d.dir, 'cgroup.procs')))];
  }

  /** What `counters()` read last (all zero for a new group, whose counters start at zero): no read needed. */
  get previous(): CgroupCounters {
    return this.last;
  }

  /** The counters now (one pread per controller); remembered as `previous`. */
  counters(): CgroupCounters {
    this.last = { oomKills: this.oom?.read() ?? 0, pidsRefused: this.forks?.read() ?? 0 };
    return this.last;
  }

  /**
   * Kills every process still in the cgroup (strays that left the kernel's process group too) and removes it. The
   * removal runs off the event loop: removing a memory cgroup that held a kernel took up to 14 ms here (p90 4.5 ms).
   * True once removed (a cgroup is removable only when no process is left in it); false after ~1 s of trying.
   */
  async destroy(): Promise<boolean> {
    this.closeCounters();
    for (let attempt = 0; attempt < 40; attempt++) {
      const removed = await Promise.all(
        this.dirList().map((dir) => {
          killAll(dir);
          return tryRmdirAsync(dir);
        }),
      );
      if (removed.every(Boolean)) return true;
      await delay(25);
    }
    return false;
  }

  /** Synchronous best effort (process exit): a cgroup left behind is removed at the next start. */
  destroySync(): void {
    this.closeCounters();
    for (const dir of this.dirList()) killAndRemove(dir);
  }

  private closeCounters(): void {
    this.oom?.close();
    this.forks?.close();
  }

  private dirList(): string[] {
    return [...new Set([...this.dirs.values()].map((d) => d.dir))];
  }
}

/**
 * Per-session memory and process caps through cgroups: v2 (`memory.max`, `pids.max`) where our cgroup
 * delegates those controllers, else the v1 `memory` and `pids` hierarchies. Each server keeps its session
 * cgroups under `stoa-{data dir hash}-{pid}` inside its own cgroup; groups of a previous run of the same
 * data dir (the data-dir lock says it is gone) or of a dead server are removed at start.
 */
export class Cgroups {
  private readonly roots = new Map<Controller, { dir: string; version: 1 | 2 }>();
  private readonly live = new Set<SessionCgroup>();
  private readonly removing = new Set<Promise<boolean>>();
  /** Why a cap asked for is not enforced (per controller); empty when every asked-for cap is active. */
  readonly inactive = new Map<Controller, string>();
  private seq = 0;

  constructor(
    private readonly caps: CgroupCaps,
    dataDir: string,
    hierarchies: Hierarchy[] = discoverHierarchies(),
  ) {
    const tag = `stoa-${createHash('sha256').update(dataDir).digest('hex').slice(0, 8)}`;
    const wanted: Controller[] = [
      ...(caps.memoryBytes ? ['memory' as const] : []),
      ...(caps.pids ? ['pids' as const] : []),
    ];
    const opened = new Map<string, { dir: string; version: 1 | 2 }>(); // by our own cgroup dir
    for (const c of wanted) {
      const h =
        hierarchies.find((x) => x.version === 2 && x.controllers.includes(c)) ??
        hierarchies.find((x) => x.version === 1 && x.controllers.includes(c));
      if (!h) {
        this.inactive.set(c, `no cgroup hierarchy on this host offers the ${c} controller`);
        continue;
      }
      try {
        let root = opened.get(h.own);
        if (!root) {
          root = openRoot(
            h,
            tag,
            wanted.filter((x) => h.controllers.includes(x)),
          );
          opened.set(h.own, root);
        }
        this.roots.set(c, root);
      } catch (err) {
        this.inactive.set(
          c,
          `cannot create a cgroup under ${h.own} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}): run the server as root with a writable cgroup hierarchy, ` +
            `or in a cgroup v2 subtree delegated to it whose own group holds no processes (systemd: Delegate=yes)`,
        );
      }
    }
  }

  /** What is enforced, for logs and /health. */
  active(): { memory?: string; pids?: string } {
    const out: { memory?: string; pids?: string } = {};
    const mem = this.roots.get('memory');
    const pids = this.roots.get('pids');
    if (mem) out.memory = `${Math.round(this.caps.memoryBytes / 1048576)} MiB per session (cgroup v${mem.version})`;
    if (pids) out.pids = `${this.caps.pids} processes per session (cgroup v${pids.version})`;
    return out;
  }

  get enabled(): boolean {
    return this.roots.size > 0;
  }

  /** A new cgroup for one kernel, with the caps written; throws when the host refuses. */
  create(name: string): SessionCgroup {
    const made = new Map<Controller, { dir: string; version: 1 | 2 }>();
    const leaf = `${name}-${++this.seq}`;
    try {
      for (const [c, root] of this.roots) {
        const dir = join(root.dir, leaf);
        if (!existsSync(dir)) mkdirSync(dir);
        made.set(c, { dir, version: root.version });
        writeLimit(c, dir, root.version, this.caps);
      }
    } catch (err) {
      new SessionCgroup(made).destroySync();
      throw new KernelStartError(
        `Cannot create the session's cgroup (${(err as Error).message}), so its memory and process caps could not be applied; the kernel was not started. ` +
          'Check that the cgroup hierarchy is still writable, or set sandbox.limits.session_memory_mb and session_processes to 0.',
      );
    }
    const group = new SessionCgroup(made);
    this.live.add(group);
    return group;
  }

  /** Kills what is in `group` and removes it: true once it is gone (so is every process it held). */
  async remove(group: SessionCgroup): Promise<boolean> {
    if (!this.live.delete(group)) return false;
    const done = group.destroy();
    this.removing.add(done);
    try {
      return await done;
    } finally {
      this.removing.delete(done);
    }
  }

  /** Removes every session cgroup (waiting for removals under way) and this server's parent (shutdown). */
  async removeAll(): Promise<void> {
    await Promise.all([...[...this.live].map((g) => this.remove(g)), ...this.removing]);
    for (const r of new Set([...this.roots.values()].map((x) => x.dir))) tryRmdir(r);
  }

  /** Synchronous best effort, for process exit. */
  removeAllSync(): void {
    for (const g of this.live) g.destroySync();
    for (const r of new Set([...this.roots.values()].map((x) => x.dir))) tryRmdir(r);
  }
}

/** This server's parent group in hierarchy `h` (stale ones removed first); v2: with the controllers handed on. */
function openRoot(h: Hierarchy, tag: string, controllers: Controller[]): { dir: string; version: 1 | 2 } {
  const enable = controllers.map((x) => `+${x}`).join(' ');
  if (
    h.version === 2 &&
    !controllers.every((c) => readText(join(h.own, 'cgroup.subtree_control')).split(/\s+/).includes(c))
  ) {
    writeFileSync(join(h.own, 'cgroup.subtree_control'), enable); // EBUSY when our own group holds processes
  }
  removeStale(h.own, tag);
  const dir = join(h.own, `${tag}-${process.pid}`);
  mkdirSync(dir);
  if (h.version === 2) writeFileSync(join(dir, 'cgroup.subtree_control'), enable);
  return { dir, version: h.version };
}

function writeLimit(c: Controller, dir: string, version: 1 | 2, caps: CgroupCaps): void {
  if (c === 'pids') return writeFileSync(join(dir, 'pids.max'), String(caps.pids));
  if (version === 2) {
    writeFileSync(join(dir, 'memory.max'), String(caps.memoryBytes));
    bestEffort(() => writeFileSync(join(dir, 'memory.swap.max'), '0'));
    return;
  }
  writeFileSync(join(dir, 'memory.limit_in_bytes'), String(caps.memoryBytes));
  // Swap counted too where the host accounts it (memsw ≥ limit, so written after it).
  bestEffort(() => writeFileSync(join(dir, 'memory.memsw.limit_in_bytes'), String(caps.memoryBytes)));
}

/** Parent groups of a previous run of this data dir, or of a server that is gone, with everything in them. */
function removeStale(own: string, tag: string): void {
  for (const name of readdirSync(own)) {
    const m = /^stoa-[0-9a-f]{8}-(\d+)$/.exec(name);
    if (!m) continue;
    const mine = name.startsWith(`${tag}-`);
    if (!mine && processAlive(Number(m[1]))) continue;
    const dir = join(own, name);
    const children = readdirSync(dir, { withFileTypes: true })
      .filter((c) => c.isDirectory())
      .map((c) => join(dir, c.name));
    // Killed processes take a moment to leave their group (start-up only, so a short synchronous wait).
    for (let attempt = 0; attempt < 40 && !children.every((c) => killAndRemove(c)); attempt++)
      Atomics.wait(PAUSE, 0, 0, 25);
    tryRmdir(dir);
  }
}

const PAUSE = new Int32Array(new SharedArrayBuffer(4));

/** SIGKILLs what is in `dir`, then removes it; false while processes are still leaving. */
function killAndRemove(dir: string): boolean {
  killAll(dir);
  return tryRmdir(dir);
}

/** SIGKILLs every process in cgroup `dir` (none when it is gone). */
function killAll(dir: string): void {
  if (!existsSync(dir)) return;
  if (existsSync(join(dir, 'cgroup.kill'))) bestEffort(() => writeFileSync(join(dir, 'cgroup.kill'), '1'));
  for (const pid of readPids(join(dir, 'cgroup.procs'))) bestEffort(() => process.kill(pid, 'SIGKILL'));
}

function readPids(file: string): number[] {
  try {
    return readFileSync(file, 'utf8').split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** Removes an empty cgroup; true once it is gone, false while processes are still in it (EBUSY). */
function tryRmdir(dir: string): boolean {
  try {
    rmdirSync(dir);
    return true;
  } catch (err) {
    return gone(err);
  }
}

const tryRmdirAsync = (dir: string): Promise<boolean> => rmdir(dir).then(() => true, gone);
const gone = (err: unknown): boolean => (err as NodeJS.ErrnoException).code === 'ENOENT';

function bestEffort(fn: () => void): void {
  try {
    fn();
  } catch {
    /* optional file or process already gone */
  }
}
