import { type ChildProcess, spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import type { Readable, Writable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { Logger } from '@nestjs/common';
import { randomToken, settlesWithin } from '@stoa/core';
import {
  BoundedLines,
  commandLine,
  pendingLine,
  type DriverFrame,
  type DriverReply,
  MAX_REPLY_LINE_BYTES,
  parseFrame,
} from './driver-channel';
import { describeExit, unfinished, unwrapExit } from './kernel-exit';
import { KernelDeadError, KernelStartError } from './kernel.errors';
import { MarkerSplitter, OutputCapture } from './output-capture';
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

type DriverOp = 'exec' | 'inspect' | 'install_tools' | 'capture' | 'literals' | 'dump' | 'load';

/** After a timeout's interrupt, how long a transfer op (user __reduce__ / __setstate__) may take to yield. */
const TRANSFER_GRACE_MS = 2000;

/** What the supervisor is told of a command before it is sent: host id, end-marker nonce, reply token. */
interface Armed {
  id: number;
  nonce: string;
  token: string;
}

interface Pending {
  id: number;
  reply?: DriverReply;
  stdoutDone: boolean;
  stderrDone: boolean;
  settle: () => void;
  check: () => void;
}

/**
 * One Python kernel process running the Stoa driver, in its own process group. Executions are
 * expected to be serialised by the caller (the session); `execute` rejects if one is in flight.
 */
export class KernelProcess extends EventEmitter<{ exit: [code: number | null, signal: NodeJS.Signals | null] }> {
  readonly startedAt = Date.now();
  private readonly child: ChildProcess;
  /** To the supervisor: which command is pending and the nonce of its end markers (never seen by user code). */
  private readonly commands: Writable;
  /** To the user-code process: the commands themselves (sent straight, so the supervisor is not a hop on the way in). */
  private readonly userCommands: Writable;
  private readonly control: Writable;
  private readonly out = new MarkerSplitter();
  private readonly err = new MarkerSplitter();
  private pending: Pending | undefined;
  /** The next command's pending line, already with the supervisor (written while the kernel is idle). */
  private armed: Armed | undefined;
  /** Environment variables the next command carries (see assign). */
  private identity: Record<string, string> | undefined;
  private arming: NodeJS.Immediate | undefined;
  private nextId = 1;
  private exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  private readonly closed: Promise<void>;
  private readonly ready: Promise<void>;
  private startupStderr = '';
  /** Why the host stopped this kernel for breaking the driver protocol (set once). */
  private faultReason: string | undefined;
  private readonly logger = new Logger(KernelProcess.name);

  constructor(private readonly spec: LaunchSpec) {
    super();
    this.child = spawn(spec.file, spec.args, {
      cwd: spec.cwd,
      env: spec.env,
      uid: spec.uid,
      gid: spec.gid,
      detached: true, // own process group: the whole tree is killed together
      stdio: ['ignore', 'pipe', 'pipe', 'pipe', 'pipe', 'pipe', 'pipe'],
    });
    const pipes = this.child.stdio as unknown as Writable[];
    this.commands = pipes[3]!;
    this.control = pipes[5]!;
    this.userCommands = pipes[6]!;
    for (const pipe of [this.commands, this.control, this.userCommands]) pipe.on('error', () => undefined); // EPIPE when the kernel died; reported through 'exit'
    this.pipeStream(this.child.stdout as Readable, this.out, 'stdout');
    this.pipeStream(this.child.stderr as Readable, this.err, 'stderr');
    this.closed = new Promise((resolve) => this.child.once('close', () => resolve()));
    this.ready = new Promise<void>((resolve, reject) => {
      const replies = new BoundedLines(
        MAX_REPLY_LINE_BYTES,
        (line) => this.onLine(line, resolve),
        () => this.fault(`it wrote a reply line over ${MAX_REPLY_LINE_BYTES / 1024 / 1024} MiB`),
      );
      (this.child.stdio[4] as Readable).on('data', (chunk: Buffer) => {
        try {
          replies.push(chunk);
        } catch (err) {
          this.fault(`its reply could not be handled (${(err as Error).message})`);
        }
      });
      this.child.once('error', (e) => reject(new KernelStartError(`Cannot start the kernel: ${e.message}`)));
      this.child.once('exit', (rawCode, rawSignal) => {
        const { code, signal } = unwrapExit(rawCode, rawSignal, this.spec.wrapped);
        this.exited = { code, signal };
        const why = this.faultReason ? `it was stopped because ${this.faultReason}` : describeExit(code, signal);
        reject(
          new KernelStartError(`The kernel exited during start-up (${why}). ${this.startupStderr.slice(-2000)}`.trim()),
        );
        this.killGroup();
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

  /** Resolves once the driver reported ready; rejects if it dies first or takes longer than `timeoutMs`. */
  async waitReady(timeoutMs: number): Promise<void> {
    try {
      if (!(await settlesWithin(this.ready, timeoutMs)))
        throw new KernelStartError(`The kernel did not start within ${timeoutMs / 1000}s.`);
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

  /** The value of a namespace variable: JSON when it serialises, else its repr; undefined when missing. */
  async capture(name: string, timeoutMs: number): Promise<{ kind: 'json' | 'repr'; value: unknown } | undefined> {
    const r = await this.execute('', { timeoutMs, graceMs: 1000, captureChars: 1000 }, 'capture', { name });
    const v = r.value as { kind: string; value?: unknown } | undefined;
    return r.outcome === ExecutionOutcome.completed && v && v.kind !== 'missing'
      ? (v as { kind: 'json' | 'repr'; value: unknown })
      : undefined;
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

  /** Serialises variable `name` into `path` (a file the kernel may write, e.g. in its transferDir). */
  async dump(name: string, path: string, timeoutMs: number): Promise<DumpResult> {
    const r = await this.execute('', { timeoutMs, graceMs: TRANSFER_GRACE_MS, captureChars: 1000 }, 'dump', {
      name,
      path,
    });
    if (r.outcome !== ExecutionOutcome.completed)
      return { found: true, error: unfinished(`Serialising '${name}'`, r, timeoutMs) };
    const v = r.value as { found?: boolean; serializer?: Serializer; size_bytes?: number; error?: string } | undefined;
    if (!v) return { found: true, error: r.error ?? 'The kernel did not report the result of the serialisation.' };
    if (!v.found) return { found: false };
    return v.error !== undefined
      ? { found: true, error: v.error }
      : { found: true, serializer: v.serializer, sizeBytes: v.size_bytes };
  }

  /**
   * Binds variable `name` to the object in `path` (written by `dump`; give it to this kernel with `giveToKernel`).
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
    const { id, nonce, token } = this.armed ?? this.arm();
    this.armed = undefined;
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
    const pending: Pending = {
      id,
      stdoutDone: false,
      stderrDone: false,
      settle,
      check: () => {
        if (pending.reply && pending.stdoutDone && pending.stderrDone) settle();
      },
    };
    this.pending = pending;
    this.out.begin(nonce, stdout, () => ((pending.stdoutDone = true), pending.check()));
    this.err.begin(nonce, stderr, () => ((pending.stderrDone = true), pending.check()));
    // The supervisor's line is in its pipe (written by arm) before the user process can answer the command.
    const identity = this.identity;
    this.identity = undefined;
    this.userCommands.write(
      commandLine(token, {
        ...extra,
        op,
        code,
        policy: opts.policy,
        screen: opts.screen,
        rewrite: opts.rewrite,
        ...(identity ? { identity } : {}),
      }),
    );

    let outcome: ExecutionOutcome = ExecutionOutcome.completed;
    try {
      if (!(await settlesWithin(done, opts.timeoutMs))) {
        this.interrupt();
        outcome = ExecutionOutcome.interrupted;
        if (await settlesWithin(done, opts.graceMs))
          this.userCommands.write(commandLine('-', { op: 'reap' })); // before the next command: end what the cell left running
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
      this.out.end();
      this.err.end();
      this.pending = undefined;
      if (!this.exited) this.arming = setImmediate(() => this.armNext());
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
      durationMs: performance.now() - started,
      exit: outcome === ExecutionOutcome.died ? this.exited : undefined,
    };
  }

  /**
   * Tells the supervisor which command comes next. Done once the answer to the previous one is on its way (an
   * immediate), so the write and the supervisor's wake-up are off the next command's path; a command sent sooner
   * writes its own line first. The line is no secret the user process could use: it never sees the nonce, and the
   * token reaches it only with the command itself.
   */
  private arm(): Armed {
    const armed = { id: this.nextId++, nonce: randomToken(12), token: randomToken(8) };
    this.commands.write(pendingLine(armed.id, armed.nonce, armed.token));
    return armed;
  }

  private armNext(): void {
    this.arming = undefined;
    if (!this.exited && !this.pending && !this.armed) this.armed = this.arm();
  }

  /** Asks the driver for SIGINT (KeyboardInterrupt in user code; the namespace survives). */
  interrupt(): void {
    if (!this.exited) this.control.write('i');
  }

  /** Kills the kernel and everything it started (its process group). */
  kill(): void {
    this.killGroup();
  }

  /** Kills the group and waits until the process is reaped. */
  async close(): Promise<void> {
    this.killGroup();
    await settlesWithin(this.closed, 5000);
  }

  private killGroup(): void {
    const pid = this.child.pid;
    if (!pid) return;
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      /* group already gone */
    }
  }

  /** One line from the reply pipe: every line is untrusted and checked; a bad one stops the kernel. */
  private onLine(line: string, ready: () => void): void {
    const parsed = parseFrame(line);
    if ('fault' in parsed) return this.fault(parsed.fault);
    const msg: DriverFrame = parsed.frame;
    if (msg.type === 'ready') return (this.armNext(), ready());
    if (msg.type === 'fault') return this.fault(msg.reason.slice(0, 500));
    const pending = this.pending;
    if (!pending || msg.id !== pending.id || pending.reply)
      return this.fault(`it sent a result for command ${msg.id}, which is not the one pending`);
    pending.reply = msg.reply;
    pending.check();
  }

  /** The kernel broke the driver protocol: kill it; the execution (or the start) reports `reason`. */
  private fault(reason: string): void {
    if (this.faultReason === undefined) {
      this.faultReason = reason;
      this.logger.warn({ pid: this.child.pid, reason }, 'kernel stopped: it broke the driver protocol');
    }
    this.killGroup();
  }

  private pipeStream(stream: Readable, splitter: MarkerSplitter, name: string): void {
    const decoder = new StringDecoder('utf8');
    stream.on('data', (chunk: Buffer) => {
      try {
        const text = decoder.write(chunk);
        if (!this.pending && name === 'stderr' && this.startupStderr.length < 8000) this.startupStderr += text;
        splitter.push(text);
      } catch (err) {
        this.logger.error({ pid: this.child.pid, err: (err as Error).message }, `kernel ${name} handling failed`);
      }
    });
  }
}
