import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { InvalidInputError, settlesWithin, type Principal } from '@stoa/core';
import { JobService, JobStatus } from '@stoa/jobs';
import { ExecutionOutcome, KernelService, type ExecuteOptions, type KernelDirs, type KernelExecution, type KernelProcess } from '@stoa/kernel';
import { SessionService, SessionStatus, type SessionRuntime } from '@stoa/sessions';
import { DEFAULT_MAX_CODE_BYTES, MAX_CAPTURE_CHARS } from './execution.config';
import type { ExecuteInput, ExecuteOrigin, ExecuteResult, JobHandle } from './execution.types';
import { emptyResult, FAILED, shapeResult } from './result-shape';
import { type Artifact, artifactNote, changedArtifacts, type OutputSnapshot, snapshotOutputs, TransferLog, TransferRuntime } from '@stoa/transfer';
import { oversizedCode, refused, runCell } from './kernel-run';

/** What the execution service needs from config. */
export interface ExecutionSettings {
  serverName: string;
  mode: 'sync' | 'async_only' | 'adaptive';
  promotionThresholdS: number;
  defaultTimeoutS: number;
  maxTimeoutS: number;
  truncationThreshold: number;
  interruptGraceMs: number;
  /** Largest cell in UTF-8 bytes (`execution.max_code_bytes`; default 1 MiB). */
  maxCodeBytes?: number;
}
export const EXECUTION_SETTINGS = Symbol('EXECUTION_SETTINGS');

/** The execute pipeline: resolve session → validate → run in the kernel (inline, as a job, or promoted) → shape. */
@Injectable()
export class ExecutionService {
  private readonly logger = new Logger(ExecutionService.name);

  constructor(
    @Inject(EXECUTION_SETTINGS) private readonly settings: ExecutionSettings,
    private readonly sessions: SessionService,
    private readonly kernels: KernelService,
    @Optional() private readonly jobs?: JobService,
    @Optional() private readonly transfer?: TransferRuntime,
    @Optional() private readonly transferLog?: TransferLog,
  ) {}

  /** Runs one cell with asset/handle resolution (when the transfer module is present). */
  async runCell(owner: string, kernel: KernelProcess, dirs: KernelDirs, code: string, opts: ExecuteOptions): Promise<KernelExecution> {
    const tooLarge = oversizedCode(code, this.maxCodeBytes);
    if (tooLarge) return refused(tooLarge);
    return runCell(this.kernels, this.transfer?.inputs, owner, kernel, dirs, code, opts);
  }

  private get maxCodeBytes(): number {
    return this.settings.maxCodeBytes ?? DEFAULT_MAX_CODE_BYTES;
  }

  /** Files a run wrote, recorded for the admin API. */
  private async artifactsOf(runtime: SessionRuntime, before: OutputSnapshot): Promise<Artifact[]> {
    const list = await changedArtifacts(runtime.dirs, before);
    this.transferLog?.artifactsWritten(runtime.record.owner, runtime.record.id, list);
    return list;
  }

  /** Picks the session for an execute call: explicit id, the legacy MCP session, or a new one. */
  async resolveSession(principal: Principal, input: ExecuteInput, origin: ExecuteOrigin): Promise<SessionRuntime> {
    const explicit = input.execution_session_id;
    if (explicit !== undefined && explicit !== null) return this.sessions.get(principal, explicit);
    const transport = origin.transportSessionId;
    if (transport) {
      const existing = this.sessions.find(principal, transport);
      if (existing) return existing;
      if (!this.sessions.isLive(transport)) return this.sessions.create(principal, { type: 'mcp_connection' }, transport);
    }
    return this.sessions.create(principal, { type: 'auto_created', tool: 'execute' });
  }

  /** Runs `input.code`; failures of the code are results (`success: false`), not exceptions. */
  async execute(principal: Principal, input: ExecuteInput, origin: ExecuteOrigin = {}): Promise<ExecuteResult | JobHandle> {
    const timeoutS = this.clampTimeout(input.timeout);
    const description = input.description ?? '';
    if (!input.code || !input.code.trim()) {
      // Validation failure is a normal result (reference §1.2); no session is created for it.
      const sessionId = input.execution_session_id ? (await this.sessions.get(principal, input.execution_session_id)).record.id : undefined;
      return { ...emptyResult(), description, stderr: 'Code cannot be empty', error: 'Code cannot be empty', session_id: sessionId };
    }
    const tooLarge = oversizedCode(input.code, this.maxCodeBytes);
    if (tooLarge) {
      // Refused before any session or kernel work: an existing session keeps its state.
      const sessionId = input.execution_session_id ? (await this.sessions.get(principal, input.execution_session_id)).record.id : undefined;
      return { ...emptyResult(), description, stderr: tooLarge, error: tooLarge, session_id: sessionId };
    }
    const runtime = await this.resolveSession(principal, input, origin);
    const base = { description, session_id: runtime.record.id };
    if (runtime.busyJob) return { ...emptyResult(), ...base, stderr: `Session busy — job ${runtime.busyJob} is still running` };
    this.sessions.touch(runtime);
    const mode = this.jobs ? this.settings.mode : 'sync';
    if (mode === 'async_only') return this.startJob(runtime, input.code, timeoutS, description, origin);
    const sofar = { stdout: '', stderr: '' };
    let jobId: string | undefined;
    const run = runtime.lock.runExclusive(async () => {
      const { kernel } = await this.sessions.kernelFor(runtime);
      const before = await snapshotOutputs(runtime.dirs);
      const r = await this.runCell(runtime.record.owner, kernel, runtime.dirs, input.code, {
        timeoutMs: timeoutS * 1000,
        graceMs: this.settings.interruptGraceMs,
        captureChars: this.captureChars(),
        screen: this.kernels.screenOptions,
        policy: origin.policy,
        onOutput: (stream, text) => {
          origin.onOutput?.(stream, text);
          if (jobId) this.jobs?.appendOutput(jobId, stream, text);
          else if (mode === 'adaptive' && sofar[stream].length < 1_000_000) sofar[stream] += text;
        },
      });
      // A timed-out foreground run registers nothing; a promoted (background) one registers what it wrote.
      const registers = r.outcome === ExecutionOutcome.completed || jobId !== undefined;
      return { ...r, artifacts: registers ? await this.artifactsOf(runtime, before) : [] };
    });
    // The caller cancelling (notifications/cancelled, or closing a 2026-07-28 stream) interrupts the run.
    const cancel = () => runtime.kernel?.interrupt();
    origin.signal?.addEventListener('abort', cancel, { once: true });
    try {
      if (mode === 'adaptive' && !(await settlesWithin(run, this.settings.promotionThresholdS * 1000))) {
        origin.signal?.removeEventListener('abort', cancel); // the job outlives this request
        const seen = { stdout: sofar.stdout.length, stderr: sofar.stderr.length };
        const jobs = this.jobs as JobService;
        const job = await jobs.startBackground(principal.id, runtime.record.id, description, true, { stdout: sofar.stdout.slice(0, seen.stdout), stderr: sofar.stderr.slice(0, seen.stderr) });
        jobId = job.id;
        for (const s of ['stdout', 'stderr'] as const) if (sofar[s].length > seen[s]) jobs.appendOutput(job.id, s, sofar[s].slice(seen[s]));
        runtime.busyJob = job.id;
        void this.finishJob(runtime, job.id, run, timeoutS);
        return this.handle(job.id, runtime, description, true);
      }
      const result = await run;
      this.sessions.touch(runtime);
      return { ...withArtifacts(shapeResult(result, timeoutS, this.captureChars(), this.settings.interruptGraceMs), result.artifacts, this.settings.serverName), ...base };
    } finally {
      origin.signal?.removeEventListener('abort', cancel);
    }
  }

  /** Cancels the caller's background job: recorded as cancelled, and the session's kernel is interrupted (namespace kept). */
  async cancelJob(principal: Principal, jobId: string): Promise<void> {
    const jobs = this.jobs as JobService;
    const job = await jobs.getJob(principal, jobId);
    if (!(await jobs.cancelJob(job.id))) return;
    const runtime = this.sessions.find(principal, job.sessionId);
    if (runtime?.busyJob === job.id) runtime.kernel?.interrupt();
  }

  /** Namespace summary for `inspect_session`; `busy` when an execution holds the session. */
  async inspect(runtime: SessionRuntime): Promise<{ busy: boolean; namespace: Record<string, { type: string; repr: string }> }> {
    if (runtime.busyJob || runtime.lock.pending > 0) return { busy: true, namespace: {} };
    return runtime.lock.runExclusive(async () => {
      const kernel = runtime.kernel;
      if (!kernel?.alive) return { busy: false, namespace: {} };
      return { busy: false, namespace: (await kernel.inspect(10_000)) ?? {} };
    });
  }

  /** Characters kept per stream (the truncation threshold, or a hard cap when truncation is off). */
  captureChars(): number {
    return this.settings.truncationThreshold > 0 ? this.settings.truncationThreshold : MAX_CAPTURE_CHARS;
  }

  /** Timeout rules of the reference: > 0, clamped to max_timeout. */
  clampTimeout(timeout: number | undefined, fallback = this.settings.defaultTimeoutS): number {
    if (timeout === undefined || timeout === null) return Math.min(fallback, this.settings.maxTimeoutS);
    if (!(timeout > 0)) throw new InvalidInputError('Timeout must be greater than 0 seconds.');
    return Math.min(timeout, this.settings.maxTimeoutS);
  }

  private async startJob(runtime: SessionRuntime, code: string, timeoutS: number, description: string, origin: ExecuteOrigin): Promise<JobHandle> {
    const jobs = this.jobs as JobService;
    const job = await jobs.startBackground(runtime.record.owner, runtime.record.id, description, false);
    runtime.busyJob = job.id;
    const run = runtime.lock.runExclusive(async () => {
      const { kernel } = await this.sessions.kernelFor(runtime);
      const before = await snapshotOutputs(runtime.dirs);
      const r = await this.runCell(runtime.record.owner, kernel, runtime.dirs, code, {
        timeoutMs: timeoutS * 1000,
        graceMs: this.settings.interruptGraceMs,
        captureChars: this.captureChars(),
        screen: this.kernels.screenOptions,
        policy: origin.policy,
        onOutput: (stream, text) => {
          origin.onOutput?.(stream, text);
          jobs.appendOutput(job.id, stream, text);
        },
      });
      return { ...r, artifacts: await this.artifactsOf(runtime, before) }; // background: what it wrote, timed out or not
    });
    void this.finishJob(runtime, job.id, run, timeoutS);
    return this.handle(job.id, runtime, description, false);
  }

  private async finishJob(runtime: SessionRuntime, jobId: string, run: Promise<KernelExecution & { artifacts: Artifact[] }>, timeoutS: number): Promise<void> {
    const jobs = this.jobs as JobService;
    try {
      const result = await run;
      const shaped = withArtifacts(shapeResult(result, timeoutS, this.captureChars(), this.settings.interruptGraceMs), result.artifacts, this.settings.serverName);
      const closed = runtime.record.status !== SessionStatus.active;
      const error = closed ? `Session ${runtime.record.id} was closed while job ${jobId} was running` : jobError(shaped);
      await jobs.finish(jobId, { status: shaped.success && !closed ? JobStatus.completed : JobStatus.failed, error, result: { ...shaped, session_id: runtime.record.id } });
    } catch (err) {
      await jobs.finish(jobId, { status: JobStatus.failed, error: `Background job failed: ${(err as Error).message}` }).catch(() => undefined);
    } finally {
      if (runtime.busyJob === jobId) runtime.busyJob = undefined;
      this.sessions.touch(runtime);
    }
  }

  private handle(jobId: string, runtime: SessionRuntime, description: string, promoted: boolean): JobHandle {
    const poll = `${this.settings.serverName}_check_job`;
    const message = promoted
      ? `Execution exceeded ${this.settings.promotionThresholdS}s and was promoted to background. Poll with ${poll}(job_id='${jobId}').`
      : `Code submitted for background execution. Poll with ${poll}(job_id='${jobId}').`;
    return {
      job_id: jobId,
      status: 'running',
      session_id: runtime.record.id,
      ...(promoted ? { promoted: true } : {}),
      ...(description ? { description } : {}),
      poll_tool: poll,
      message,
    };
  }
}

/** A failed job's `error`: the timeout or kernel-death sentence, else the reference's generic text. */
function jobError(r: { success: boolean; stderr: string; kernel_restarted?: boolean }): string | null {
  if (r.success) return null;
  if (r.stderr.startsWith('Execution timeout after')) return r.stderr.slice(0, r.stderr.indexOf('.') + 1) || r.stderr;
  if (r.kernel_restarted) return r.stderr.slice(r.stderr.lastIndexOf('The kernel process died'));
  return FAILED;
}

export { FAILED };

/** Files the run wrote, and the reference's note when it succeeded with some. */
function withArtifacts<R extends { success: boolean; artifacts: Artifact[]; note?: string }>(shaped: R, artifacts: Artifact[], server: string): R {
  return { ...shaped, artifacts, ...(shaped.success && artifacts.length ? { note: artifactNote(artifacts, server) } : {}) };
}
