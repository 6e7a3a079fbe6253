import { chmodSync, readdirSync, rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit, Optional } from '@nestjs/common';
import { StoaMetrics } from '@stoa/activity';
import { randomToken } from '@stoa/core';
import { buildKernelEnv } from './kernel-env';
import { KernelProcess } from './kernel-process';
import { KernelLauncher, type LaunchedKernel } from './kernel-launcher';
import { type KernelLease, type PoolStatus, WarmPool } from './kernel-pool';
import { disallowedActionsText, driverPath, resolvePython, type PythonInfo } from './python';
import { codeScreenOn, sandboxConfigSchema, type SandboxConfig } from './sandbox.config';
import { type KernelDirs, kernelDirs, prepareDirs, Sandbox, stashDir } from './sandbox';
import type { SessionCgroup } from './cgroup';
import type { KernelExecution } from './kernel.types';
import { type DiskUsage, guardCell } from './session-limits';
import { lockDataDir } from './data-dir-lock';
import { KernelStartError } from './kernel.errors';
import { UidLeases } from './uid-lease';
import { UidVacancy } from './uid-vacancy';

/** What the kernel service needs from config. */
export interface KernelSettings {
  python: string;
  env: Readonly<Record<string, string>>;
  passthroughEnv: readonly string[];
  startTimeoutMs: number;
  /** Where kernel directories live (`{dataDir}/sessions/k-…`). */
  dataDir: string;
  /** Default: the secure one (network none, filesystem confined). */
  sandbox?: SandboxConfig;
  /** Development server (no-op auth): per-kernel uids may fall back to the server's user, with a warning. */
  allowSandboxFallback?: boolean;
  /** Kernels started ahead of demand (default 0 = none). */
  warmPool?: number;
  /** Most kernels the pool keeps after a burst of new sessions (default: warmPool, i.e. a fixed-size pool). */
  warmPoolMax?: number;
  /** Extra host paths kernels must be able to read (environment prefix, asset cache…). */
  readPaths?: readonly string[];
  /** Largest object `stash(obj)` accepts in a kernel (STOA_HANDLE_MAX_BYTES; the driver's default is 100 MiB). */
  handleMaxBytes?: number;
  /** Runs on every new kernel after it is ready (tool proxy injection); a failure fails the start. */
  bootstrap?: (kernel: KernelProcess) => Promise<void>;
}

export const KERNEL_SETTINGS = Symbol('KERNEL_SETTINGS');

/**
 * Starts sandboxed kernels with the interpreter resolved once at boot and a scrubbed environment, keeps a
 * warm pool, hands out per-kernel directories and uids, and reaps every kernel on shutdown (no orphans).
 */
@Injectable()
export class KernelService implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(KernelService.name);
  private readonly live = new Set<KernelProcess>();
  /** Kernels being reaped and their directories removed after their result went out (see `retire`). */
  private readonly retiring = new Set<Promise<void>>();
  private readonly cgroupOf = new WeakMap<KernelProcess, SessionCgroup>();
  private readonly diskUse = new WeakMap<KernelProcess, { usage?: DiskUsage }>();
  private readonly vacancy = new UidVacancy();
  private readonly uids: UidLeases | undefined;
  private readonly unlock: () => void;
  readonly python: PythonInfo;
  readonly sandbox: Sandbox;
  private readonly driver = driverPath();
  private readonly launcher: KernelLauncher;
  private readonly pool: WarmPool;
  private readonly screen: { allowed_prefixes: readonly string[] } | undefined;
  private guidance?: string;

  constructor(
    @Inject(KERNEL_SETTINGS) private readonly settings: KernelSettings,
    @Optional() private readonly metrics?: StoaMetrics,
  ) {
    this.unlock = lockDataDir(settings.dataDir);
    this.python = resolvePython(settings.python);
    this.launcher = new KernelLauncher(this.python.executable, join(dirname(this.driver), 'stoa_launcher.py'));
    const sandbox = settings.sandbox ?? sandboxConfigSchema.parse({});
    const pythonPath = (settings.env.PYTHONPATH ?? '').split(':').filter(Boolean);
    this.sandbox = new Sandbox({
      config: sandbox,
      dataDir: settings.dataDir,
      python: this.python,
      driver: this.driver,
      readPaths: [...pythonPath, ...(settings.readPaths ?? [])],
      allowFallback: settings.allowSandboxFallback,
    });
    this.sandbox.probe();
    const c = this.sandbox.config;
    this.uids = this.sandbox.dropUids
      ? new UidLeases({ base: c.uid_base, count: c.uid_count, dir: c.uid_lease_dir, dataDir: settings.dataDir })
      : undefined;
    this.screen = codeScreenOn(sandbox) ? { allowed_prefixes: sandbox.allowed_path_prefixes } : undefined;
    this.logger.log(
      {
        python: this.python.executable,
        version: this.python.version,
        sandbox: this.sandbox.describe(),
        codeScreen: !!this.screen,
      },
      'kernel interpreter and sandbox ready',
    );
    this.logLimits();
    if (this.sandbox.degraded) {
      this.logger.warn(
        { reason: this.sandbox.degraded },
        `Kernels run as the server's own user (${process.getuid?.() === 0 ? 'root' : 'this user'}), not as one unprivileged uid each: ${this.sandbox.degraded}. ` +
          'Fine for a single-user development machine; for per-kernel uids install bubblewrap (apt-get install bubblewrap) ' +
          'or use an interpreter every user can read (environment.python: /usr/bin/python3). Servers with real auth refuse to start in this state.',
      );
    }
    this.pool = new WarmPool(
      settings.warmPool ?? 0,
      () => this.startWarm(),
      (l) => this.discard(l),
      settings.warmPoolMax,
    );
    process.once(
      'exit',
      () => (this.killAll(), this.sandbox.cgroups.removeAllSync(), this.uids?.releaseAll(), this.unlock()),
    );
  }

  onModuleInit(): void {
    this.hardenDataDir();
    this.removeStaleDirs();
    this.pool.fill();
  }

  /**
   * Kernel directories of a previous run (its sessions are expired now). Removed at start so a uid handed out
   * again never finds an old session's files; the data dir belongs to one replica.
   */
  private removeStaleDirs(): void {
    let stale: string[] = [];
    for (const root of [join(this.settings.dataDir, 'sessions'), join(this.settings.dataDir, 'inbox')]) {
      try {
        const names = readdirSync(root).filter((n) => /^(k-|\.probe-)/.test(n));
        for (const n of names) rmSync(join(root, n), { recursive: true, force: true });
        stale = [...stale, ...names];
      } catch {
        /* nothing there yet */
      }
    }
    if (stale.length) this.logger.log({ count: stale.length }, 'kernel directories of a previous run removed');
  }

  /** The screen's "Disallowed actions" text for the execute tool's description, when the screen is on. */
  get screenGuidance(): string | undefined {
    if (!this.screen) return undefined;
    this.guidance ??= disallowedActionsText(this.python.executable, this.driver, this.screen.allowed_prefixes);
    return this.guidance;
  }

  /** The code-screen options for executions, when the screen is on. */
  get screenOptions(): { allowed_prefixes: readonly string[] } | undefined {
    return this.screen;
  }

  /** A pooled kernel (synchronously), or undefined when none is ready. */
  takeWarm(): KernelLease | undefined {
    return this.pool.take();
  }

  /** A kernel with fresh directories: from the pool when one is ready, else started now. */
  async acquire(): Promise<KernelLease> {
    return this.pool.take() ?? (await this.startFresh());
  }

  /** New kernel directories with their own uid (root servers). */
  allocateDirs(): KernelDirs {
    const dirs = kernelDirs(join(this.settings.dataDir, 'sessions', `k-${randomToken(12)}`), this.uids?.acquire());
    try {
      prepareDirs(dirs);
    } catch (err) {
      if (dirs.uid !== undefined) this.uids?.release(dirs.uid);
      throw err;
    }
    return dirs;
  }

  /** Removes kernel directories and frees their uid (call after the kernel is closed). */
  async releaseDirs(dirs: KernelDirs): Promise<void> {
    await rm(dirs.base, { recursive: true, force: true });
    await rm(dirs.inboxDir, { recursive: true, force: true });
    const vacated = await this.vacancy.vacated(dirs.base);
    if (dirs.uid !== undefined) this.uids?.release(dirs.uid, vacated);
  }

  /** How many times the uid leases looked at every process of the host (tests, benches). */
  get uidScans(): number {
    return this.uids?.scans ?? 0;
  }

  /** Starts a kernel in existing directories (a session's replacement kernel) and waits until it is bootstrapped. */
  async start(dirs: KernelDirs): Promise<KernelProcess> {
    const started = performance.now();
    try {
      const kernel = await this.startIn(dirs);
      this.metrics?.kernelStartDuration.observe({ outcome: 'ok' }, (performance.now() - started) / 1000);
      return kernel;
    } catch (err) {
      this.metrics?.kernelStartDuration.observe({ outcome: 'error' }, (performance.now() - started) / 1000);
      throw err;
    }
  }

  private async startIn(dirs: KernelDirs): Promise<KernelProcess> {
    const began = performance.now();
    const env = buildKernelEnv({
      host: process.env,
      pythonExecutable: this.python.executable,
      passthrough: this.settings.passthroughEnv,
      extra: this.settings.env,
      session: {
        AGORA_OUTPUT_DIR: dirs.outputDir,
        STOA_HANDLE_DIR: stashDir(dirs),
        ...(this.settings.handleMaxBytes ? { STOA_HANDLE_MAX_BYTES: String(this.settings.handleMaxBytes) } : {}),
      },
    });
    const cgroups = this.sandbox.cgroups;
    const cgroup = cgroups.enabled ? cgroups.create(basename(dirs.base)) : undefined;
    const spec = this.sandbox.launch(dirs, env, ['-u', this.driver], cgroup);
    let launched: LaunchedKernel;
    const removeCgroup = (group: SessionCgroup) => this.vacancy.removing(dirs.base, cgroups.remove(group));
    if (cgroup) this.vacancy.launching(dirs.base);
    try {
      launched = await this.launcher.spawn(spec, this.settings.startTimeoutMs);
    } catch (err) {
      if (cgroup) removeCgroup(cgroup);
      throw err;
    }
    const kernel = new KernelProcess(launched, spec);
    this.live.add(kernel);
    if (cgroup) this.cgroupOf.set(kernel, cgroup);
    // The cgroup goes with the kernel, and with it every process it left behind (even outside its process group).
    kernel.once('exit', () => (this.live.delete(kernel), cgroup && removeCgroup(cgroup)));
    // One start timeout for the launch and the driver's ready together.
    const limit = this.settings.startTimeoutMs;
    await kernel.waitReady(Math.max(1, limit - (performance.now() - began)), limit);
    if (this.settings.bootstrap) {
      try {
        await this.settings.bootstrap(kernel);
      } catch (err) {
        await kernel.close();
        throw err;
      }
    }
    return kernel;
  }

  /**
   * Runs one cell of `kernel` (working in `dirs`) under the session's caps: the disk quota is enforced while it
   * runs, and the result carries notes on any cap the cell ran into.
   */
  guardCell(kernel: KernelProcess, dirs: KernelDirs, run: () => Promise<KernelExecution>): Promise<KernelExecution> {
    let last = this.diskUse.get(kernel);
    if (!last) this.diskUse.set(kernel, (last = {}));
    return guardCell(this.sandbox.config.limits, kernel, dirs.base, this.cgroupOf.get(kernel), run, last);
  }

  /** Number of kernel processes alive now (pooled ones included). */
  get liveCount(): number {
    return this.live.size;
  }

  /** Kernels serving sessions and batch items (live ones minus those waiting in or starting for the pool). */
  get inUseCount(): number {
    const pool = this.pool.status();
    return Math.max(0, this.live.size - pool.ready - pool.starting);
  }

  poolStatus(): PoolStatus {
    return this.pool.status();
  }

  /** How many kernels the pool would keep ready at `now` (its burst memory fades after 10 minutes). */
  poolTarget(now?: number): number {
    return this.pool.target(now);
  }

  /**
   * Ends a kernel whose result is already in hand (a batch item): killed now, its reaping and directory removal
   * run after the caller has answered; shutdown waits for them.
   */
  retire(lease: KernelLease): void {
    lease.kernel.kill();
    const done = this.discard(lease)
      .catch((err: Error) => this.logger.warn({ err: err.message }, 'could not clean up a retired kernel'))
      .finally(() => this.retiring.delete(done));
    this.retiring.add(done);
  }

  killAll(): void {
    for (const kernel of this.live) kernel.kill();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.pool.stop();
    await Promise.all(this.retiring);
    const kernels = [...this.live];
    await Promise.all(kernels.map((k) => k.close()));
    if (kernels.length) this.logger.log({ count: kernels.length }, 'kernels reaped on shutdown');
    await this.launcher.close();
    await this.sandbox.cgroups.removeAll();
    this.uids?.releaseAll();
    this.unlock();
  }

  private async startFresh(): Promise<KernelLease> {
    const dirs = this.allocateDirs();
    try {
      return { kernel: await this.start(dirs), dirs };
    } catch (err) {
      await this.releaseDirs(dirs);
      throw err;
    }
  }

  /** A kernel for the pool: started, then warmed (a kernel that cannot run the warm-up is not handed out). */
  private async startWarm(): Promise<KernelLease> {
    const lease = await this.startFresh();
    const failed = await lease.kernel.warm(this.settings.startTimeoutMs);
    if (failed === undefined) return lease;
    await this.discard(lease);
    throw new KernelStartError(`A new kernel could not run its warm-up cell (${failed}); it was discarded.`);
  }

  private async discard(lease: KernelLease): Promise<void> {
    await lease.kernel.close();
    await this.releaseDirs(lease.dirs);
  }

  /** Says once which session limits are enforced; a warning names each one asked for that this host cannot enforce. */
  private logLimits(): void {
    const limits = this.sandbox.describeLimits();
    this.logger.log({ limits }, 'kernel resource limits');
    const off = Object.entries(limits).filter(([, v]) => v.startsWith('off (') && !v.includes(': 0)'));
    if (off.length) {
      this.logger.warn(
        { limits: Object.fromEntries(off) },
        `Not enforced on this host: ${off.map(([k, v]) => `${k} ${v.slice(4, -1)}`).join('; ')}. ` +
          'Other limits stay active; one session can use more memory or processes than sandbox.limits asks until the host allows cgroups.',
      );
    }
  }

  /** Kernels under other uids may see the host view: keep the data dir unlistable and the database private. */
  private hardenDataDir(): void {
    if (!this.sandbox.dropUids) return;
    try {
      chmodSync(this.settings.dataDir, 0o711);
      for (const f of readdirSync(this.settings.dataDir))
        if (/\.sqlite/.test(f)) chmodSync(join(this.settings.dataDir, f), 0o600);
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'could not tighten data dir permissions');
    }
  }
}
