import { Inject, Injectable, Optional } from '@nestjs/common';
import { InvalidInputError, UnavailableError, type Principal } from '@stoa/core';
import { JobService } from '@stoa/jobs';
import { SessionService, type SessionRuntime } from '@stoa/sessions';
import { BackgroundRunner } from './background-runner';
import { CellRunner, oversizedCode } from './cell-runner.service';
import { EXECUTION_SETTINGS, type ExecutionSettings } from './execution.config';
import { ExecutionActivity } from './execution-activity';
import { EXECUTION_HOOKS, type ExecutionHooks, HookRunner } from './execution-hooks';
import type { ExecuteInput, ExecuteOrigin, ExecuteResult, JobHandle } from './execution.types';
import { InlineRunner } from './inline-runner';
import { emptyResult } from './result-shape';

/** The execute pipeline: validate → resolve the session → run inline (sync, adaptive) or as a job (async_only, promoted). */
@Injectable()
export class ExecutionService {
  private readonly inline: InlineRunner;
  /** Present when the app has a job queue; without one every run is inline, whatever the mode. */
  private readonly background?: BackgroundRunner;
  private readonly hooks: HookRunner;

  constructor(
    @Inject(EXECUTION_SETTINGS) private readonly settings: ExecutionSettings,
    private readonly sessions: SessionService,
    private readonly cells: CellRunner,
    activity: ExecutionActivity,
    @Optional() jobs?: JobService,
    @Optional() @Inject(EXECUTION_HOOKS) hooks?: ExecutionHooks,
  ) {
    this.hooks = new HookRunner(settings.serverName, hooks);
    this.inline = new InlineRunner(cells, sessions, settings.promotionThresholdS, activity);
    this.background = jobs && new BackgroundRunner(jobs, cells, sessions, settings, this.hooks, activity);
  }

  /** Picks the session for an execute call: explicit id, the legacy MCP session, or a new one. */
  async resolveSession(principal: Principal, input: ExecuteInput, origin: ExecuteOrigin): Promise<SessionRuntime> {
    const explicit = input.execution_session_id;
    if (explicit !== undefined && explicit !== null) return this.sessions.get(principal, explicit);
    const transport = origin.transportSessionId;
    if (transport) {
      const existing = this.sessions.find(principal, transport);
      if (existing) return existing;
      if (!this.sessions.isLive(transport))
        return this.sessions.create(principal, { type: 'mcp_connection' }, transport);
    }
    return this.sessions.create(principal, { type: 'auto_created', tool: 'execute' });
  }

  /** Runs `input.code`; failures of the code are results (`success: false`), not exceptions. */
  async execute(
    principal: Principal,
    input: ExecuteInput,
    origin: ExecuteOrigin = {},
  ): Promise<ExecuteResult | JobHandle> {
    const timeoutS = this.clampTimeout(input.timeout);
    const description = input.description ?? '';
    const refusal = input.code.trim() ? oversizedCode(input.code, this.cells.maxCodeBytes) : 'Code cannot be empty';
    if (refusal) return this.refuse(principal, input, description, refusal);
    const runtime = await this.resolveSession(principal, input, origin);
    if (runtime.busyJob)
      return {
        ...emptyResult(),
        description,
        session_id: runtime.record.id,
        stderr: `Session busy — job ${runtime.busyJob} is still running`,
      };
    this.sessions.touch(runtime);
    const placed = { principal, runtime, timeoutS, description, origin };
    const hooked = await this.hooks.before(placed, input.code);
    if ('refusal' in hooked)
      return {
        ...emptyResult(),
        description,
        stderr: hooked.refusal,
        error: hooked.refusal,
        session_id: runtime.record.id,
      };
    const call = { ...placed, code: hooked.code };
    const background = this.background;
    if (background && this.settings.mode === 'async_only') return background.start(call);
    const out =
      background && this.settings.mode === 'adaptive'
        ? await this.inline.runAdaptive(call, background)
        : await this.inline.run(call);
    return 'job_id' in out ? out : this.hooks.after(call, out);
  }

  /** Cancels the caller's background job: recorded as cancelled, and the session's kernel is interrupted (namespace kept). */
  async cancelJob(principal: Principal, jobId: string): Promise<void> {
    if (!this.background)
      throw new UnavailableError(
        `This server runs no background jobs (no job queue is configured), so there is no job ${jobId} to cancel.`,
      );
    await this.background.cancel(principal, jobId);
  }

  /** Namespace summary for `inspect_session`; `busy` when an execution holds the session. */
  async inspect(
    runtime: SessionRuntime,
  ): Promise<{ busy: boolean; namespace: Record<string, { type: string; repr: string }> }> {
    if (runtime.busyJob || runtime.lock.pending > 0) return { busy: true, namespace: {} };
    return runtime.lock.runExclusive(async () => {
      const kernel = runtime.kernel;
      if (!kernel?.alive) return { busy: false, namespace: {} };
      return { busy: false, namespace: (await kernel.inspect(10_000)) ?? {} };
    });
  }

  /** Timeout rules of the reference: > 0, clamped to max_timeout. */
  clampTimeout(timeout: number | undefined, fallback = this.settings.defaultTimeoutS): number {
    if (timeout === undefined || timeout === null) return Math.min(fallback, this.settings.maxTimeoutS);
    if (!(timeout > 0)) throw new InvalidInputError('Timeout must be greater than 0 seconds.');
    return Math.min(timeout, this.settings.maxTimeoutS);
  }

  /** A cell refused before any session or kernel work (reference §1.2: a normal result); an existing session keeps its state. */
  private async refuse(
    principal: Principal,
    input: ExecuteInput,
    description: string,
    message: string,
  ): Promise<ExecuteResult> {
    const sessionId = input.execution_session_id
      ? (await this.sessions.get(principal, input.execution_session_id)).record.id
      : undefined;
    return { ...emptyResult(), description, stderr: message, error: message, session_id: sessionId };
  }
}
