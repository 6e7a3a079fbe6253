import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { StringDecoder } from 'node:string_decoder';
import { Logger } from '@nestjs/common';
import { randomToken, settlesWithin } from '@stoa/core';
import {
  capturedValue,
  commandLine,
  type DriverFrame,
  type DriverReply,
  FrameReader,
  MAX_FRAME_BYTES,
  pendingLine,
} from './driver-channel';
import { describeExit, unfinished, unwrapExit } from './kernel-exit';
import { KernelDeadError, KernelStartError } from './kernel.errors';
import { killGroup, type LaunchedKernel } from './kernel-launcher';
import { OutputCapture } from './output-capture';
import type { LaunchSpec } from './sandbox';
import {
  type DumpResult,
  ExecutionOutcome,
  type ExecuteOptions,
  type KernelExecution,
  type LoadResult,
  type Serializer,
  type ToolSpec,
} from './kernel.types';

type DriverOp = 'exec' | 'inspect' | 'install_tools' | 'literals' | 'dump' | 'load' | 'warm';

/** After a timeout's interrupt, how long a transfer op (user __reduce__ / __setstate__) may take to yield. */
const TRANSFER_GRACE_MS = 2000;

/** What the supervisor is told of a command before it is sent: host id and reply token. */
interface Armed {
  id: number;
  token: string;
}

interface Pending {
  id: number;
  reply?: DriverReply;
  stdout: OutputCapture;
  stderr: OutputCapture;
  settle: () => void;
}

/** Commands announced to the supervisor per write (see arm). */
const ARM_BATCH = 16;

/** Start-up diagnostics kept for the start error (the interpreter's or the driver's traceback). */
const STARTUP_STDERR_CHARS = 8000;

/**
 * One Python kernel process running the Stoa driver, in its own process group. Executions are
 * expected to be serialised by the caller (the session); `execute` rejects if one is in flight.
 */
export class KernelProcess extends EventEmitter<{ exit: [code: number | null, signal: NodeJS.Signals | null] }> {
  readonly startedAt = Date.now();
  /** The user process's output, decoded per stream (a character split across frames is joined). */
  private readonly decoders = { stdout: new StringDecoder('utf8'), stderr: new StringDecoder('utf8') };
  private pending: Pending | undefined;
  /** Commands announced to the supervisor and not sent yet, oldest first (written while the kernel is idle). */
  private readonly armed: Armed[] = [];
  /** Environment variables the next command carries (see assign). */
  private identity: Record<string, string> | undefined;
  private arming: NodeJS.Immediate | undefined;
  private nextId = 1;
  private exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  /** Resolves once the process is reaped and everything it wrote is read. */
  private readonly closed: Promise<void>;
  private readonly ready: Promise<void>;
  private startupStderr = '';
  /** Why the host stopped this kernel for breaking the driver protocol (set once). */
  private faultReason: string | undefined;
  private readonly logger = new Logger(KernelProcess.name);

  /** `child` is a process the launcher started from `spec` (see KernelLauncher). */
  constructor(
    private readonly child: LaunchedKernel,
    private readonly spec: LaunchSpec,
  ) {
    super();
    // fds 1 and 2 carry only what the interpreter, bubblewrap or the supervisor print (user code writes to the
    // supervisor): kept for the start error.
    const decoder = new StringDecoder('utf8');
    child.output.on('data', (chunk: Buffer) => this.keepStartupStderr(decoder.write(chunk)));
    const ended = (s: Socket) => new Promise<void>((resolve) => s.once('close', () => resolve()));
    this.closed = Promise.all([child.exited, ended(child.replies), ended(child.output)]).then(() => undefined);
    this.ready = new Promise<void>((resolve, reject) => {
      const frames = new FrameReader(
        MAX_FRAME_BYTES,
        (frame) => this.onFrame(frame, resolve),
        (reason) => this.fault(reason),
      );
      child.replies.on('data', (chunk: Buffer) => {
        try {
          frames.push(chunk);
        } catch (err) {
          this.fault(`its reply could not be handled (${(err as Error).message})`);
        }
      });
      void child.exited.then((raw) => {
        const { code, signal } = unwrapExit(raw.code, raw.signal, this.spec.wrapped);
        this.exited = { code, signal };
        const why = this.faultReason ? `it was stopped because ${this.faultReason}` : describeExit(code, signal);
        // What it printed is read by then (its sockets close after the exit is seen).
        void settlesWithin(this.closed, 1000).then(() =>
          reject(
            new KernelStartError(
              `The kernel exited during start-up (${why}). ${this.startupStderr.slice(-2000)}`.trim(),
            ),
          ),
        );
        this.kill();
        this.emit('exit', code, signal);
        this.pending?.settle();
      });
    });
    this.ready.catch(() => undefined);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get alive(): boolean {
    return !this.exited;
  }

  get busy(): boolean {
    return this.pending !== undefined;
  }

  /**
   * Resolves once the driver reported ready; rejects if it dies first or takes longer than `timeoutMs` (what is left
   * of the start limit `limitMs`, which the message names).
   */
  async waitReady(timeoutMs: number, limitMs = timeoutMs): Promise<void> {
    try {
      if (!(await settlesWithin(this.ready, timeoutMs)))
        throw new KernelStartError(`The kernel did not start within ${limitMs / 1000}s.`);
      await this.ready;
    } catch (err) {
      this.kill();
      throw err;
    }
  }

  /** Public namespace names with type and clipped repr; undefined when the kernel could not answer. */
  async inspect(timeoutMs: number): Promise<Record<string, { type: string; repr: string }> | undefined> {
    const r = await this.execute('', { timeoutMs, graceMs: 1000, captureChars: 1000 }, 'inspect');
    return r.outcome === ExecutionOutcome.completed
      ? ((r.value as Record<string, { type: string; repr: string }> | undefined) ?? undefined)
      : undefined;
  }

  /** Installs tool proxies and list_tools() in the namespace; throws with the driver's reason on failure. */
  async installTools(tools: readonly ToolSpec[], timeoutMs: number): Promise<void> {
    const r = await this.execute('', { timeoutMs, graceMs: 1000, captureChars: 10_000 }, 'install_tools', { tools });
    if (r.outcome !== ExecutionOutcome.completed || r.raised) {
      throw new KernelStartError(`Tool proxy injection failed (proxies): ${r.error ?? r.outcome}`);
    }
  }

  /**
   * Runs the path of a cell once with nothing left behind (see the driver's `warm` op): for a kernel that waits in
   * the pool, so the session that takes it does not pay the first-touch costs. Undefined when it ran, else why not.
   */
  async warm(timeoutMs: number): Promise<string | undefined> {
    const r = await this.execute('', { timeoutMs, graceMs: 1000, captureChars: 1000 }, 'warm');
    if (r.outcome === ExecutionOutcome.completed) return r.raised ? (r.error ?? 'it raised').slice(-500) : undefined;
    return r.fault ?? (r.outcome === ExecutionOutcome.died ? 'it died' : 'it timed out');
  }

  /**
   * Gives a (pooled) kernel its session identity: variables such as USER_IDENTITY and STOA_SESSION_ID, set in its
   * environment before its next command runs. They travel with that command, so a new session pays no round trip
   * of its own for them.
   */
  assign(env: Record<string, string>): void {
    this.identity = { ...this.identity, ...env };
  }

  /** Asset tags and handle ids in `code` that the kernel would replace (spec §2.8.2); [] when it could not answer. */
  async literals(code: string, timeoutMs: number): Promise<string[]> {
    const r = await this.execute(code, { timeoutMs, graceMs: 1000, captureChars: 1000 }, 'literals');
    return r.outcome === ExecutionOutcome.completed && Array.isArray(r.value)
      ? r.value.filter((v): v is string => typeof v === 'string')
      : [];
  }

  /**
   * Serialises variable `name` into `path`: a file the kernel may write (e.g. in its transferDir), or a unix socket
   * the host listens on and the kernel may connect to (it connects on its first byte). Past `maxBytes` nothing more
   * is written and the result says `tooLarge`, with the full size.
   */
  async dump(name: string, path: string, timeoutMs: number, maxBytes?: number): Promise<DumpResult> {
    const r = await this.execute('', { timeoutMs, graceMs: TRANSFER_GRACE_MS, captureChars: 1000 }, 'dump', {
      name,
      path,
      ...(maxBytes !== undefined ? { max_bytes: maxBytes } : {}),
    });
    if (r.outcome !== ExecutionOutcome.completed)
      return { found: true, error: unfinished(`Serialising '${name}'`, r, timeoutMs) };
    const v = r.value as
      | { found?: boolean; serializer?: Serializer; size_bytes?: number; error?: string; too_large?: boolean }
      | undefined;
    if (!v) return { found: true, error: r.error ?? 'The kernel did not report the result of the serialisation.' };
    if (!v.found) return { found: false };
    if (v.error === undefined) return { found: true, serializer: v.serializer, sizeBytes: v.size_bytes };
    return v.too_large
      ? { found: true, error: v.error, tooLarge: true, sizeBytes: v.size_bytes }
      : { found: true, error: v.error };
  }

  /**
   * Binds variable `name` to the object in `path` (written by `dump`; give it to this kernel with `giveToKernel`),
   * or streamed by the host into a unix socket at `path` that the kernel may connect to.
   * On failure `error` is the kernel's traceback text (it names ModuleNotFoundError when a module is missing).
   */
  async load(name: string, path: string, serializer: Serializer, timeoutMs: number): Promise<LoadResult> {
    const r = await this.execute('', { timeoutMs, graceMs: TRANSFER_GRACE_MS, captureChars: 1000 }, 'load', {
      name,
      path,
      serializer,
    });
    if (r.outcome !== ExecutionOutcome.completed)
      return { ok: false, error: unfinished(`Loading '${name}'`, r, timeoutMs) };
    return r.raised ? { ok: false, error: r.error ?? 'The kernel could not load the object.' } : { ok: true };
  }

  async execute(
    code: string,
    opts: ExecuteOptions,
    op: DriverOp = 'exec',
    extra: Record<string, unknown> = {},
  ): Promise<KernelExecution> {
    if (this.exited) throw new KernelDeadError('The kernel has exited; start a new one.');
    if (this.pending) throw new KernelDeadError('The kernel is already executing.');
    const started = performance.now();
    if (this.arming) clearImmediate(this.arming);
    this.arming = undefined;
    if (!this.armed.length) this.arm();
    const { id, token } = this.armed.shift()!;
    const stdout = new OutputCapture(
      opts.captureChars,
      opts.captureChars,
      opts.onOutput && ((t) => opts.onOutput?.('stdout', t)),
    );
    const stderr = new OutputCapture(
      opts.captureChars,
      opts.captureChars,
      opts.onOutput && ((t) => opts.onOutput?.('stderr', t)),
    );
    let settle!: () => void;
    const done = new Promise<void>((resolve) => (settle = resolve));
    const pending: Pending = { id, stdout, stderr, settle };
    this.pending = pending;
    // The supervisor's line is in its pipe (written by arm) before the user process can answer the command.
    const identity = this.identity;
    this.identity = undefined;
    this.child.userCommands.write(
      commandLine(token, {
        ...extra,
        op,
        code,
        policy: opts.policy,
        screen: opts.screen,
        rewrite: opts.rewrite,
        capture: opts.capture,
        ...(identity ? { identity } : {}),
      }),
    );

    let outcome: ExecutionOutcome = ExecutionOutcome.completed;
    try {
      if (!(await settlesWithin(done, opts.timeoutMs))) {
        this.interrupt();
        outcome = ExecutionOutcome.interrupted;
        if (await settlesWithin(done, opts.graceMs))
          this.child.userCommands.write(commandLine('-', { op: 'reap' })); // before the next command: end what the cell left running
        else {
          outcome = ExecutionOutcome.killed;
          this.kill();
          await settlesWithin(this.closed, 2000);
        }
      }
      if (!pending.reply && outcome !== ExecutionOutcome.killed) {
        outcome = ExecutionOutcome.died;
        await settlesWithin(this.closed, 1000);
      }
    } finally {
      this.pending = undefined;
      if (!this.exited && !this.armed.length) this.arming = setImmediate(() => this.armNext());
    }
    return {
      outcome,
      raised: pending.reply?.ok === false,
      fault: this.faultReason,
      rejected: pending.reply?.rejected ? (pending.reply.error ?? 'rejected') : undefined,
      stdout,
      stderr,
      displays: pending.reply?.displays ?? [],
      value: pending.reply?.value,
      error: pending.reply?.error ?? undefined,
      toolCalls: pending.reply?.tool_calls ?? [],
      toolCallsDropped: pending.reply?.tool_calls_dropped ?? {},
      stashed: pending.reply?.stashed ?? [],
      captured: outcome === ExecutionOutcome.completed ? capturedValue(pending.reply) : undefined,
      durationMs: performance.now() - started,
      exit: outcome === ExecutionOutcome.died ? this.exited : undefined,
    };
  }

  /**
   * Tells the supervisor which commands come next, ARM_BATCH of them in one write: done while the kernel is idle
   * (at start, or in an immediate once the previous answer is on its way), so the write and the supervisor's
   * wake-up are off the commands' path and happen once per batch. A command sent with none announced writes the
   * batch first. The lines are no secret the user process could use: a token reaches it only with its command, and
   * the supervisor takes answers in announcement order only.
   */
  private arm(): void {
    let lines = '';
    for (let i = 0; i < ARM_BATCH; i++) {
      const armed = { id: this.nextId++, token: randomToken(8) };
      this.armed.push(armed);
      lines += pendingLine(armed.id, armed.token);
    }
    this.child.commands.write(lines);
  }

  private armNext(): void {
    this.arming = undefined;
    if (!this.exited && !this.pending && !this.armed.length) this.arm();
  }

  /** Asks the driver for SIGINT (KeyboardInterrupt in user code; the namespace survives). */
  interrupt(): void {
    if (!this.exited) this.child.control.write('i');
  }

  /** Kills the kernel and everything it started (its process group). */
  kill(): void {
    killGroup(this.child.pid);
  }

  /** Kills the group and waits until the process is reaped. */
  async close(): Promise<void> {
    this.kill();
    await settlesWithin(this.closed, 5000);
  }

  /** One frame from the reply pipe (the reader has checked it): output, a result, ready, or a fault. */
  private onFrame(frame: DriverFrame, ready: () => void): void {
    if (frame.type === 'output') return this.onOutput(frame.stream, frame.data);
    if (frame.type === 'ready') return (this.armNext(), ready());
    if (frame.type === 'fault') return this.fault(frame.reason);
    const pending = this.pending;
    if (!pending || frame.id !== pending.id || pending.reply)
      return this.fault(`it sent a result for command ${frame.id}, which is not the one pending`);
    pending.reply = frame.reply;
    if (frame.reply.echo) pending.stdout.append(frame.reply.echo);
    pending.settle();
  }

  /** Output of the user process: the pending execution's (everything before its result); while idle it belongs to none. */
  private onOutput(stream: 'stdout' | 'stderr', data: Buffer): void {
    const text = this.decoders[stream].write(data);
    const pending = this.pending;
    if (pending && !pending.reply) pending[stream].append(text);
    else if (stream === 'stderr') this.keepStartupStderr(text);
  }

  private keepStartupStderr(text: string): void {
    if (this.startupStderr.length < STARTUP_STDERR_CHARS) this.startupStderr += text;
  }

  /** The kernel broke the driver protocol: kill it; the execution (or the start) reports `reason`. */
  private fault(reason: string): void {
    if (this.faultReason === undefined) {
      this.faultReason = reason;
      this.logger.warn({ pid: this.child.pid, reason }, 'kernel stopped: it broke the driver protocol');
    }
    this.kill();
  }
}
