import { Inject, Injectable, Optional } from '@nestjs/common';
import { InvalidInputError, UnavailableError, type Principal } from '@stoa/core';
import { JobService } from '@stoa/jobs';
import { SessionService, type SessionRuntime } from '@stoa/sessions';
import { BackgroundRunner } from './background-runner';
import { CellRunner, oversizedCode } from './cell-runner.service';
import { EXECUTION_SETTINGS, type ExecutionSettings } from './execution.config';
import { ExecutionActivity } from './execution-activity';
import type { ExecuteInput, ExecuteOrigin, ExecuteResult, JobHandle } from './execution.types';
import { InlineRunner } from './inline-runner';
import { emptyResult } from './result-shape';

/** The execute pipeline: validate → resolve the session → run inline (sync, adaptive) or as a job (async_only, promoted). */
@Injectable()
export class ExecutionService {
  private readonly inline: InlineRunner;
  /** Present when the app has a job queue; without one every run is inline, whatever the mode. */
  private readonly background?: BackgroundRunner;

  constructor(
    @Inject(EXECUTION_SETTINGS) private readonly settings: ExecutionSettings,
    private readonly sessions: SessionService,
    private readonly cells: CellRunner,
    activity: ExecutionActivity,
    @Optional() jobs?: JobService,
  ) {
    this.inline = new InlineRunner(cells, sessions, settings.promotionThresholdS, activity);
    this.background = jobs && new BackgroundRunner(jobs, cells, sessions, settings, activity);
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
    const call = { principal, runtime, code: input.code, timeoutS, description, origin };
    const background = this.background;
    if (background && this.settings.mode === 'async_only') return background.start(call);
    if (background && this.settings.mode === 'adaptive') return this.inline.runAdaptive(call, background);
    return this.inline.run(call);
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
