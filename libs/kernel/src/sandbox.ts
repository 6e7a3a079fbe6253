import { spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { chmod, chown } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { Cgroups, type SessionCgroup } from './cgroup';
import { KernelStartError } from './kernel.errors';
import { closedAncestor, MountPlan } from './mount-plan';
import type { PythonInfo } from './python';
import { needsNamespaces, type SandboxConfig } from './sandbox.config';
import { describeLimits } from './session-limits';

/** A kernel's directories and identity (one per session or batch item). */
export interface KernelDirs {
  /** `{data_dir}/sessions/k-…`: HOME of the kernel; holds work/ and outputs/. */
  base: string;
  workDir: string;
  outputDir: string;
  /** `{workDir}/.stoa`: files the kernel hands to the host (stashed handles in `stash/`, serialised objects). */
  transferDir: string;
  /**
   * `{data_dir}/inbox/k-…`: files the host hands to the kernel (assets, handles, received objects). Owned by the
   * server and read-only for the kernel, so nothing the kernel does (symlinks, renames) can redirect host writes.
   */
  inboxDir: string;
  /** The unprivileged uid the kernel runs as (root servers), else undefined. */
  uid?: number;
}

/** How to spawn one kernel process. */
export interface LaunchSpec {
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  uid?: number;
  gid?: number;
  /** The process is bwrap: a kernel killed by signal N shows as exit code 128+N. */
  wrapped: boolean;
}

export interface SandboxSettings {
  config: SandboxConfig;
  dataDir: string;
  python: PythonInfo;
  driver: string;
  /** Extra paths kernels must read (tool modules, environment prefix, asset cache). */
  readPaths: readonly string[];
  /**
   * A development server (no-op auth) may run kernels as its own user when per-kernel uids are impossible
   * (no bubblewrap and an interpreter under a closed home), saying so at start. Servers with real auth refuse.
   */
  allowFallback?: boolean;
}

const MiB = 1024 * 1024;

/**
 * Turns the sandbox config into a launch plan per kernel: bubblewrap namespaces and mounts, an unprivileged
 * uid per kernel when the server is root, rlimits applied by the driver before user code. Refuses at start
 * (probe) when the host cannot provide what the config asks.
 */
export class Sandbox {
  readonly bwrap: string | undefined;
  /** util-linux unshare, for `network: none` without bubblewrap (a network namespace of the kernel's own). */
  readonly unshare: string | undefined;
  readonly dropUids: boolean;
  /**
   * Why kernels run as the server's user although `sandbox.user` asked for per-kernel uids (development
   * servers only: no bubblewrap and an interpreter other uids cannot reach); undefined when nothing was given up.
   */
  readonly degraded: string | undefined;
  private readonly root = process.geteuid?.() === 0;
  /** Per-session memory and process caps (cgroups), where the host lets this server create them. */
  readonly cgroups: Cgroups;

  get config(): SandboxConfig {
    return this.s.config;
  }

  constructor(private readonly s: SandboxSettings) {
    const c = s.config;
    const bwrap = findBwrap();
    // network: none alone can do with util-linux's unshare (a network namespace); a confined filesystem needs bwrap.
    this.unshare = !bwrap && c.network === 'none' && c.filesystem === 'host' ? findUnshare() : undefined;
    if (needsNamespaces(c) && !bwrap && !this.unshare) {
      throw new KernelStartError(
        `sandbox.network: ${c.network} / sandbox.filesystem: ${c.filesystem} need bubblewrap (bwrap), which is not installed. ` +
          'Install it (Debian/Ubuntu: apt-get install bubblewrap), or set sandbox.network: inherit and sandbox.filesystem: host ' +
          'to run kernels without OS isolation (never on a server shared by several users).',
      );
    }
    const wantUids = this.root && c.user !== 'server';
    this.degraded = wantUids && !bwrap ? this.uidDropBlocker() : undefined;
    if (this.degraded && (c.user === 'per_kernel' || !s.allowFallback)) {
      throw new KernelStartError(
        `Kernels must run as their own unprivileged uid (sandbox.user: ${c.user}${c.user === 'auto' ? ' with real auth' : ''}), but ${this.degraded}. ` +
          "Install bubblewrap (apt-get install bubblewrap: it binds the interpreter into each kernel's view), or point environment.python at an interpreter every user can read (e.g. /usr/bin/python3).",
      );
    }
    this.dropUids = wantUids && !this.degraded;
    this.bwrap = needsNamespaces(c) || this.dropUids ? bwrap : undefined;
    this.cgroups = new Cgroups(
      { memoryBytes: c.limits.session_memory_mb * MiB, pids: c.limits.session_processes },
      s.dataDir,
    );
    if (this.dropUids) {
      for (const p of [dirname(s.driver), ...s.readPaths]) {
        const mode = statSync(p, { throwIfNoEntry: false })?.mode;
        if (mode !== undefined && (mode & 0o005) !== 0o005) {
          throw new KernelStartError(
            `Kernels run as unprivileged uids because the server runs as root, but ${p} (mode ${(mode & 0o777).toString(8)}) is not readable by other users, ` +
              `so kernels could not import from it. Make it readable (chmod o+rx ${p}) or set sandbox.user: server.`,
          );
        }
      }
    }
  }

  /**
   * Without bubblewrap a kernel uid sees the host's permissions as they are: the reason it could not start the
   * interpreter or read the driver, tool modules or its own directory, else undefined.
   */
  private uidDropBlocker(): string | undefined {
    const py = this.s.python;
    const paths = [py.executable, py.prefix, py.basePrefix, this.s.driver, ...this.s.readPaths, this.s.dataDir];
    for (const p of paths) {
      const closed = closedAncestor(p);
      if (closed) return `bubblewrap is not installed and ${closed} (on the way to ${p}) is closed to other users`;
    }
    return undefined;
  }

  /** One line for logs and /health. */
  describe(): Record<string, unknown> {
    const c = this.s.config;
    return {
      network: c.network,
      filesystem: c.filesystem,
      isolation: this.bwrap ? 'bubblewrap' : this.unshare ? 'unshare (network namespace only)' : 'none',
      user: this.dropUids ? `per-kernel uid ${c.uid_base}+` : this.root ? 'root' : 'server user',
      ...(this.degraded ? { degraded: `no per-kernel uids: ${this.degraded}` } : {}),
      limits: this.describeLimits(),
    };
  }

  /** Which per-process and per-session limits are enforced, and why one asked for is not. */
  describeLimits(): Record<string, string> {
    return describeLimits(this.s.config.limits, this.cgroups, !!this.bwrap && needsNamespaces(this.s.config));
  }

  /**
   * The spawn plan for a kernel in `dirs`, running `argv` (interpreter arguments), inside `cgroup` when given:
   * a root shell joins it and then execs the plan, so nothing the kernel forks starts outside the cgroup.
   */
  launch(dirs: KernelDirs, env: Record<string, string>, argv: string[], cgroup?: SessionCgroup): LaunchSpec {
    const spec = this.plan(dirs, env, argv, !!cgroup);
    return cgroup ? joinCgroupFirst(spec, cgroup.procs) : spec;
  }

  private plan(dirs: KernelDirs, env: Record<string, string>, argv: string[], inCgroup: boolean): LaunchSpec {
    const c = this.s.config;
    const drop = this.dropUids && dirs.uid !== undefined;
    const limits: Record<string, number> = {};
    if (c.limits.memory_mb) limits.as = c.limits.memory_mb * MiB;
    if (c.limits.file_size_mb) limits.fsize = c.limits.file_size_mb * MiB;
    if (c.limits.open_files) limits.nofile = c.limits.open_files;
    if (c.limits.processes && drop) limits.nproc = c.limits.processes;
    const fullEnv: Record<string, string> = {
      ...env,
      HOME: dirs.base,
      TMPDIR: '/tmp',
      STOA_LIMITS: JSON.stringify(limits),
    };
    // With a pid namespace or a uid of its own, a kernel may kill every other process it can signal: its strays.
    if (this.bwrap || drop) fullEnv.STOA_REAP_STRAYS = '1';
    const python = this.s.python.executable;
    if (this.unshare) {
      // unshare execs the interpreter (no fork): exit codes are the kernel's own. The driver drops to the uid.
      if (drop) Object.assign(fullEnv, { STOA_DROP_UID: String(dirs.uid), STOA_DROP_GID: String(dirs.uid) });
      const ns = this.root ? ['--net'] : ['--user', '--map-current-user', '--net'];
      return {
        file: this.unshare,
        args: [...ns, '--', python, ...argv],
        cwd: dirs.workDir,
        env: fullEnv,
        wrapped: false,
      };
    }
    if (!this.bwrap) {
      // The cgroup wrapper must start as root to join; the driver then drops to the kernel's uid itself.
      if (drop && inCgroup)
        return {
          file: python,
          args: argv,
          cwd: dirs.workDir,
          env: { ...fullEnv, STOA_DROP_UID: String(dirs.uid), STOA_DROP_GID: String(dirs.uid) },
          wrapped: false,
        };
      return {
        file: python,
        args: argv,
        cwd: dirs.workDir,
        env: fullEnv,
        uid: drop ? dirs.uid : undefined,
        gid: drop ? dirs.uid : undefined,
        wrapped: false,
      };
    }
    if (drop) Object.assign(fullEnv, { STOA_DROP_UID: String(dirs.uid), STOA_DROP_GID: String(dirs.uid) });
    const args = [
      '--die-with-parent',
      '--new-session',
      '--unshare-ipc',
      '--unshare-pid',
      '--unshare-uts',
      '--unshare-cgroup-try',
      '--hostname',
      'stoa-kernel',
    ];
    if (c.network === 'none') args.push('--unshare-net');
    if (!this.root) args.push('--unshare-user');
    if (this.root && drop) args.push('--cap-add', 'CAP_SETUID', '--cap-add', 'CAP_SETGID');
    args.push(
      ...(c.filesystem === 'confined' ? ['--ro-bind', '/', '/'] : ['--bind', '/', '/']),
      '--dev',
      '/dev',
      '--proc',
      '/proc',
    );
    args.push(...this.mounts(dirs, drop).args());
    args.push('--chdir', dirs.workDir, '--', python, ...argv);
    return { file: this.bwrap, args, cwd: dirs.workDir, env: fullEnv, wrapped: true };
  }

  private mounts(dirs: KernelDirs, drop: boolean): MountPlan {
    const c = this.s.config;
    const plan = new MountPlan(c.limits.tmp_size_mb * MiB);
    if (c.filesystem === 'confined' || c.network === 'none') {
      plan.hide('/tmp'); // private scratch; also where some services put their sockets
      plan.hide('/run'); // unix sockets of local services (PostgreSQL, Docker, MariaDB…)
    }
    if (c.filesystem === 'confined') plan.hide(this.s.dataDir); // other sessions, the database file
    for (const p of c.hidden_paths) plan.hide(p);
    const reads = [
      this.s.python.prefix,
      this.s.python.basePrefix,
      dirname(this.s.python.executable),
      dirname(this.s.driver),
      ...this.s.readPaths,
    ];
    if (drop) {
      // A uid with no rights must still reach the interpreter, e.g. a pyenv under a 0700 /root.
      for (const p of [...reads, dirs.base]) {
        const closed = closedAncestor(p);
        if (closed && closed !== p) plan.hide(closed);
      }
    }
    for (const p of new Set(reads)) if (plan.hides(p) && existsSync(p)) plan.bind(p, false);
    plan.bind(dirs.base, true);
    if (plan.hides(dirs.inboxDir)) plan.bind(dirs.inboxDir, false);
    return plan;
  }

  /**
   * Starts the driver once in probe mode through the real launch path (namespaces, uid drop, limits) and
   * refuses to go on, with the reason, when that fails.
   */
  probe(): void {
    const dir = mkdtempSync(join(ensureDir(join(this.s.dataDir, 'sessions')), '.probe-'));
    const dirs = kernelDirs(dir, this.dropUids ? this.s.config.uid_base : undefined);
    const cgroup = this.cgroups.enabled ? this.cgroups.create('probe') : undefined;
    try {
      prepareDirs(dirs);
      const spec = this.launch(
        dirs,
        { PATH: process.env.PATH ?? '/usr/bin:/bin', STOA_PROBE: '1' },
        ['-u', this.s.driver],
        cgroup,
      );
      const r = spawnSync(spec.file, spec.args, {
        cwd: spec.cwd,
        env: spec.env,
        uid: spec.uid,
        gid: spec.gid,
        encoding: 'utf8',
        timeout: 30_000,
      });
      if (r.status === 0 && r.stdout.includes('"probe": "ok"')) return;
      const why = (r.error?.message ?? `${r.stderr}${r.stdout}`).trim().split('\n').slice(-6).join('\n');
      throw new KernelStartError(
        `The kernel sandbox does not work on this host (${JSON.stringify(this.describe())}): ${why || `exit ${r.status}`}. ` +
          (this.dropUids
            ? `Kernels run as uid ${dirs.uid} because the server runs as root: the interpreter (${this.s.python.executable}), the tool modules and the data dir must be readable by that uid, or set sandbox.user: server. `
            : '') +
          'If user namespaces are disabled (sysctl kernel.unprivileged_userns_clone=0), enable them or run the server as root; ' +
          'or relax sandbox.network / sandbox.filesystem (not for shared servers).',
      );
    } finally {
      cgroup?.destroySync();
      rmSync(dir, { recursive: true, force: true });
      rmSync(dirs.inboxDir, { recursive: true, force: true });
    }
  }
}

/** The directory layout of a kernel whose HOME is `base`. */
export function kernelDirs(base: string, uid: number | undefined): KernelDirs {
  const workDir = join(base, 'work');
  const inboxDir = join(dirname(dirname(base)), 'inbox', basename(base));
  return { base, workDir, outputDir: join(base, 'outputs'), transferDir: join(workDir, '.stoa'), inboxDir, uid };
}

/** Where the kernel's `stash(obj)` writes `{handle}.pkl` and its `{handle}.json` sidecar. */
export function stashDir(dirs: KernelDirs): string {
  return join(dirs.transferDir, 'stash');
}

/** Creates a kernel's directories, owned by its uid (0700) when it has one; its inbox stays the server's (0750, group = the kernel's). */
export function prepareDirs(dirs: KernelDirs): void {
  for (const d of [dirs.base, dirs.workDir, dirs.outputDir, dirs.transferDir]) {
    mkdirSync(d, { recursive: true, mode: 0o700 });
    if (dirs.uid !== undefined) chownSync(d, dirs.uid, dirs.uid);
  }
  ensureDir(dirname(dirs.inboxDir));
  mkdirSync(dirs.inboxDir, { recursive: true, mode: 0o750 });
  if (dirs.uid !== undefined) chownSync(dirs.inboxDir, process.getuid?.() ?? 0, dirs.uid);
}

/** Makes a file the host wrote into the kernel's inbox readable (not writable) by the kernel: mode 0640, group = its uid. */
export async function giveToKernel(path: string, dirs: KernelDirs): Promise<void> {
  if (dirs.uid !== undefined) await chown(path, process.getuid?.() ?? 0, dirs.uid);
  await chmod(path, 0o640);
}

function ensureDir(d: string): string {
  mkdirSync(d, { recursive: true, mode: 0o711 });
  return d;
}

/** Wraps a plan in `/bin/sh` that writes its own pid into each `cgroup.procs`, then execs the plan (same pid). */
function joinCgroupFirst(spec: LaunchSpec, procs: string[]): LaunchSpec {
  const script = `${procs.map((_, i) => `echo $$ > "$${i + 1}"`).join(' && ')} && shift ${procs.length} && exec "$@"`;
  return {
    ...spec,
    file: '/bin/sh',
    args: ['-c', script, 'stoa-cgroup', ...procs, spec.file, ...spec.args],
    uid: undefined,
    gid: undefined,
  };
}

/** util-linux unshare from PATH; undefined when it does not run. */
function findUnshare(): string | undefined {
  return ['/usr/bin/unshare', '/bin/unshare'].find((c) => spawnSync(c, ['--version']).status === 0);
}

/** bubblewrap from STOA_BWRAP (exactly that file) or PATH; undefined when it does not run. */
function findBwrap(): string | undefined {
  const candidates = process.env.STOA_BWRAP
    ? [process.env.STOA_BWRAP]
    : (process.env.PATH ?? '')
        .split(':')
        .concat(['/usr/bin', '/usr/local/bin'])
        .map((d) => join(d || '.', 'bwrap'));
  return candidates.find((c) => spawnSync(c, ['--version']).status === 0);
}
