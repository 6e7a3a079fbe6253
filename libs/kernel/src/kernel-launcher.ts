import { type ChildProcess, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Logger } from '@nestjs/common';
import { randomToken } from '@stoa/core';
import { KernelStartError } from './kernel.errors';
import { launcherSocketDir } from './launcher-dir';
import type { LaunchSpec } from './sandbox';

/** How a kernel process ended (as Node reports a child's exit). */
export interface KernelExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A kernel started by the launcher: its pid and the host's ends of its descriptors. */
export interface LaunchedKernel {
  pid: number;
  /** Its fds 1 and 2 (what the interpreter, bubblewrap or the supervisor print; user code writes elsewhere). */
  output: Socket;
  /** fd 3: command announcements to the supervisor. */
  commands: Socket;
  /** fd 4: the supervisor's framed replies. */
  replies: Socket;
  /** fd 5: interrupt requests. */
  control: Socket;
  /** fd 6: commands to the user-code process. */
  userCommands: Socket;
  /** Resolves once the process is reaped (never rejects: the launcher's death counts as SIGKILL). */
  exited: Promise<KernelExit>;
}

type Role = 'o' | 'c' | 'r' | 'k' | 'u';
const ROLES: readonly Role[] = ['o', 'c', 'r', 'k', 'u'];
const TOKEN_CHARS = 32;
/** A connection that has not said whose it is by then is dropped. */
const HEADER_TIMEOUT_MS = 1000;

interface Waiting {
  launcher: ChildProcess;
  sockets: Partial<Record<Role, Socket>>;
  pid?: number;
  /** The launcher reaped it before all its descriptors were in (a kernel that failed at once). */
  exit?: KernelExit;
  resolve: (kernel: LaunchedKernel) => void;
  reject: (err: Error) => void;
}

interface Running {
  pid: number;
  launcher: ChildProcess;
  exit: (exit: KernelExit) => void;
}

interface LauncherMessage {
  t: string;
  pid?: number;
  error?: string;
  exit?: number | null;
  signal?: NodeJS.Signals | null;
}

/** Connections that have not said whose they are yet, at most (more are closed at once). */
const MAX_UNIDENTIFIED = 64;

/**
 * Starts kernel processes through one small Python process (`stoa_launcher.py`) instead of `child_process.spawn`:
 * Node forks its whole process to spawn, which stalls the event loop 10-20 ms per kernel; the launcher forks itself
 * in under a millisecond. It connects the kernel's descriptors to a unix socket in a private (0700) directory, each
 * with a one-time token, and reports the pid and, later, the exit. Started on first use, again after it died.
 */
export class KernelLauncher {
  private readonly logger = new Logger(KernelLauncher.name);
  private readonly waiting = new Map<string, Waiting>();
  private readonly running = new Map<string, Running>();
  private launcher: Promise<ChildProcess> | undefined;
  /** The launcher running now (set once it is spawned). */
  private current: ChildProcess | undefined;
  private readonly gone = new WeakSet<ChildProcess>();
  private server: Server | undefined;
  private dir: string | undefined;
  private unidentified = 0;
  private closing = false;

  constructor(
    private readonly python: string,
    private readonly script: string,
  ) {}

  /** Starts `spec` and resolves once its descriptors are connected; rejects with the reason it could not start. */
  async spawn(spec: LaunchSpec, timeoutMs: number): Promise<LaunchedKernel> {
    if (this.closing) throw new KernelStartError('Cannot start the kernel: the server is shutting down.');
    const child = await (this.launcher ??= this.start().catch((err: Error) => {
      this.launcher = undefined; // the next spawn tries again
      throw new KernelStartError(`Cannot start the kernel launcher: ${err.message}`);
    }));
    const t = randomToken(24);
    const request = { t, file: spec.file, args: spec.args, cwd: spec.cwd, env: spec.env, uid: spec.uid, gid: spec.gid };
    return new Promise<LaunchedKernel>((resolve, reject) => {
      const timer = setTimeout(() => {
        if (!this.waiting.has(t)) return;
        this.drop(t);
        reject(
          new KernelStartError(`The kernel did not start within ${timeoutMs / 1000}s (the launcher did not answer).`),
        );
      }, timeoutMs);
      const done =
        <T>(settle: (v: T) => void) =>
        (v: T) => (clearTimeout(timer), settle(v));
      this.waiting.set(t, { launcher: child, sockets: {}, resolve: done(resolve), reject: done(reject) });
      this.holdOpen();
      child.stdin!.write(`${JSON.stringify(request)}\n`);
    });
  }

  /** Ends the launcher for good (it kills any kernel left) and removes its socket. */
  async close(): Promise<void> {
    this.closing = true;
    const launcher = this.launcher;
    this.launcher = this.current = undefined;
    const child = await launcher?.catch(() => undefined);
    if (child && child.exitCode === null && child.signalCode === null) {
      const gone = new Promise((resolve) => child.once('close', resolve));
      child.stdin!.end();
      await gone;
    }
    this.server?.close();
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
    this.server = this.dir = undefined;
  }

  private async start(): Promise<ChildProcess> {
    this.dir ??= launcherSocketDir();
    const socket = join(this.dir, 'l.sock');
    if (!this.server) {
      const server = createServer({ allowHalfOpen: true }, (s) => this.accept(s));
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(socket, () => resolve());
      });
      server.unref();
      this.server = server;
    }
    // -I -S: no user site, no .pth files, no PYTHON* variables; nothing of the host's environment but PATH. A
    // process group of its own: a terminal's Ctrl-C is the server's to handle (it closes sessions), not the launcher's.
    const child = spawn(this.python, ['-I', '-S', this.script, socket, String(process.pid)], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    child.stdin.on('error', () => undefined); // EPIPE once it died: reported through 'close'
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
    createInterface({ input: child.stdout }).on('line', (line) => this.onMessage(line));
    child.once('error', (err) => this.onLauncherGone(child, `it could not start (${err.message})`));
    // 'close', not 'exit': every line it wrote (exits of its kernels, pids) is read by then.
    child.once('close', (code, signal) => this.onLauncherGone(child, `${signal ?? `exit code ${code}`} ${stderr}`));
    this.current = child;
    child.unref();
    for (const s of [child.stdin, child.stdout, child.stderr]) (s as Socket).unref();
    return child;
  }

  /** A connection from the launcher: `<token><role>`, then the descriptor's bytes. */
  private accept(socket: Socket): void {
    socket.on('error', () => undefined); // EPIPE/ECONNRESET once the kernel died: reported through its exit
    if (this.unidentified >= MAX_UNIDENTIFIED) return void socket.destroy();
    this.unidentified++;
    let counted = true;
    const identified = (): void => {
      if (counted) this.unidentified--;
      counted = false;
    };
    socket.once('close', identified);
    socket.setTimeout(HEADER_TIMEOUT_MS, () => socket.destroy());
    const readHeader = (): void => {
      const header = socket.read(TOKEN_CHARS + 1) as Buffer | null;
      if (header === null) return void socket.once('readable', readHeader);
      socket.setTimeout(0);
      identified();
      const t = header.subarray(0, TOKEN_CHARS).toString();
      const waiting = this.waiting.get(t);
      const role = String.fromCharCode(header[TOKEN_CHARS] ?? 0) as Role;
      if (header.length <= TOKEN_CHARS || !waiting || !ROLES.includes(role) || waiting.sockets[role])
        return void socket.destroy();
      waiting.sockets[role] = socket;
      this.settle(t);
    };
    socket.once('readable', readHeader);
  }

  private onMessage(line: string): void {
    let m: LauncherMessage;
    try {
      m = JSON.parse(line) as LauncherMessage;
    } catch {
      return this.logger.warn({ line: line.slice(0, 200) }, 'kernel launcher: unreadable message ignored');
    }
    const waiting = this.waiting.get(m.t);
    if (m.error !== undefined && waiting) {
      this.drop(m.t);
      return waiting.reject(new KernelStartError(`Cannot start the kernel: ${m.error}`));
    }
    if (m.pid !== undefined && waiting) {
      waiting.pid = m.pid;
      return this.settle(m.t);
    }
    if (m.pid !== undefined) return killGroup(m.pid); // its spawn timed out: nobody waits for it
    if (m.exit === undefined) return;
    const exit = { code: m.exit, signal: m.signal ?? null };
    if (waiting)
      waiting.exit = exit; // reaped before its descriptors were all in: settle hands it over
    else this.onExit(m.t, exit);
  }

  /** Resolves a spawn once its pid and all five descriptors are in. */
  private settle(t: string): void {
    const w = this.waiting.get(t);
    if (!w || w.pid === undefined || ROLES.some((r) => !w.sockets[r])) return;
    this.waiting.delete(t);
    const s = w.sockets as Record<Role, Socket>;
    for (const r of ['c', 'k', 'u'] as const) s[r].resume(); // the kernel shut these for writing: take the FIN
    for (const r of ['o', 'r'] as const) s[r].once('end', () => s[r].end()); // done both ways once the kernel is
    let exit!: (e: KernelExit) => void;
    const exited = new Promise<KernelExit>((resolve) => (exit = resolve));
    if (w.exit) exit(w.exit);
    else this.running.set(t, { pid: w.pid, launcher: w.launcher, exit });
    this.holdOpen();
    void exited.then(() => {
      for (const r of ['c', 'k', 'u'] as const) s[r].destroy();
    });
    w.resolve({
      pid: w.pid,
      output: s.o,
      commands: s.c,
      replies: s.r,
      control: s.k,
      userCommands: s.u,
      exited,
    });
  }

  private onExit(t: string, exit: KernelExit): void {
    const running = this.running.get(t);
    if (!running) return;
    this.running.delete(t);
    this.holdOpen();
    running.exit(exit);
  }

  /** The launcher died: its kernels die with it (they are killed to be sure), and spawns waiting for it fail. */
  private onLauncherGone(launcher: ChildProcess, why: string): void {
    if (this.gone.has(launcher)) return; // 'error' and 'close' of one failed start
    this.gone.add(launcher);
    if (this.current === launcher) this.launcher = this.current = undefined;
    for (const [t, running] of this.running) {
      if (running.launcher !== launcher) continue;
      killGroup(running.pid);
      this.onExit(t, { code: null, signal: 'SIGKILL' });
    }
    for (const [t, w] of this.waiting) {
      if (w.launcher !== launcher) continue;
      this.drop(t);
      w.reject(new KernelStartError(`Cannot start the kernel: the kernel launcher stopped (${why.trim()}).`));
    }
    if (!this.closing) this.logger.warn({ why: why.trim() }, 'kernel launcher stopped');
  }

  /** Gives up a spawn: its descriptors are closed and, if it started, it is killed (nobody will drive it). */
  private drop(t: string): void {
    const w = this.waiting.get(t);
    this.waiting.delete(t);
    for (const s of Object.values(w?.sockets ?? {})) s.destroy();
    if (w?.pid !== undefined && !w.exit) killGroup(w.pid);
    this.holdOpen();
  }

  /** Keeps the process alive while a spawn or a kernel's exit is due, as a child process handle would. */
  private holdOpen(): void {
    const stdout = this.current?.stdout as Socket | undefined;
    if (this.waiting.size + this.running.size > 0) stdout?.ref();
    else stdout?.unref();
  }
}

/** SIGKILL to the process group `pid` leads (a kernel and everything it started); nothing if it is gone. */
export function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    /* already gone */
  }
}
