import { inSpan } from '@stoa/activity';
import type { Principal } from '@stoa/core';
import { JobStatus, type JobService } from '@stoa/jobs';
import { SessionStatus, type SessionService } from '@stoa/sessions';
import type { CellRunner, SessionRun } from './cell-runner.service';
import type { ExecutionSettings } from './execution.config';
import type { ExecutionActivity } from './execution-activity';
import type { HookRunner } from './execution-hooks';
import type { ExecuteCall, JobHandle } from './execution.types';

type Stream = 'stdout' | 'stderr';
type Output = Record<Stream, string>;
/** Output an adaptive run holds for its job before it is promoted (the job record caps what it stores). */
const HELD_CHARS = 1_000_000;

/**
 * Output of an adaptive run: held while the run may still answer inline, then sent to its job once promoted
 * (what arrived while the job was being created included).
 */
export class PromotableOutput {
  private readonly heldOutput: Output = { stdout: '', stderr: '' };
  private sink?: (stream: Stream, text: string) => void;

  constructor(private readonly forward?: (stream: Stream, text: string) => void) {}

  get promoted(): boolean {
    return this.sink !== undefined;
  }

  readonly push = (stream: Stream, text: string): void => {
    this.forward?.(stream, text);
    if (this.sink) this.sink(stream, text);
    else if (this.heldOutput[stream].length < HELD_CHARS) this.heldOutput[stream] += text;
  };

  /** The output so far (a new job starts with it). */
  held(): Output {
    return { ...this.heldOutput };
  }

  /** From now on output goes to `sink`; what arrived after `sent` was taken goes first. */
  promote(sink: (stream: Stream, text: string) => void, sent: Output): void {
    for (const s of ['stdout', 'stderr'] as const)
      if (this.heldOutput[s].length > sent[s].length) sink(s, this.heldOutput[s].slice(sent[s].length));
    this.sink = sink;
  }
}

/** Execute calls that run as background jobs: async_only from the start, adaptive once promoted; and their end. */
export class BackgroundRunner {
  constructor(
    private readonly jobs: JobService,
    private readonly cells: CellRunner,
    private readonly sessions: SessionService,
    private readonly settings: Pick<ExecutionSettings, 'serverName' | 'promotionThresholdS'>,
    private readonly hooks: HookRunner,
    private readonly activity?: ExecutionActivity,
  ) {}

  /** async_only: the cell runs as a job from the start; the call returns its handle. */
  async start(call: ExecuteCall): Promise<JobHandle> {
    const { runtime, origin } = call;
    const job = await this.jobs.startBackground(runtime.record.owner, runtime.record.id, call.description, false);
    runtime.busyJob = job.id;
    const attributes = { 'stoa.job.id': job.id, 'stoa.job.kind': 'background' };
    const run = inSpan('job.run', { attributes }, () =>
      this.cells.inSession(runtime, call.code, {
        timeoutS: call.timeoutS,
        policy: origin.policy,
        onOutput: (stream, text) => {
          origin.onOutput?.(stream, text);
          this.jobs.appendOutput(job.id, stream, text);
        },
        keepArtifacts: () => true, // background: what it wrote, timed out or not
      }),
    );
    void this.finish(call, job.id, run);
    this.activity?.jobStarted(call, job.id);
    return this.handle(job.id, call, false);
  }

  /** adaptive: a cell still running at the promotion threshold becomes a job, with the output it printed so far. */
  async adopt(call: ExecuteCall, run: Promise<SessionRun>, output: PromotableOutput): Promise<JobHandle> {
    const sofar = output.held();
    const job = await this.jobs.startBackground(
      call.principal.id,
      call.runtime.record.id,
      call.description,
      true,
      sofar,
    );
    output.promote((stream, text) => this.jobs.appendOutput(job.id, stream, text), sofar);
    call.runtime.busyJob = job.id;
    void this.finish(call, job.id, run);
    this.activity?.jobStarted(call, job.id);
    return this.handle(job.id, call, true);
  }

  /** Cancels the caller's job: recorded as cancelled, and the session's kernel is interrupted (namespace kept). */
  async cancel(principal: Principal, jobId: string): Promise<void> {
    const job = await this.jobs.getJob(principal, jobId);
    if (!(await this.jobs.cancelJob(job.id))) return;
    const runtime = this.sessions.find(principal, job.sessionId);
    if (runtime?.busyJob === job.id) runtime.kernel?.interrupt();
  }

  private async finish(call: ExecuteCall, jobId: string, run: Promise<SessionRun>): Promise<void> {
    const { runtime } = call;
    try {
      const r = await run;
      const { result, failure } = this.cells.shape(r, call.timeoutS, r.artifacts);
      const closed = runtime.record.status !== SessionStatus.active;
      const error = closed
        ? `Session ${runtime.record.id} was closed while job ${jobId} was running`
        : (failure?.summary ?? null);
      const status = failure || closed ? JobStatus.failed : JobStatus.completed;
      const hooked = { ...result, description: call.description, session_id: runtime.record.id };
      const shown: Record<string, unknown> = { ...(await this.hooks.after(call, hooked)) };
      delete shown.description; // job results never carried one
      await this.jobs.finish(jobId, { status, error, result: shown });
      this.activity?.jobFinished(call, jobId, status, result, error);
    } catch (err) {
      await this.jobs
        .finish(jobId, { status: JobStatus.failed, error: `Background job failed: ${(err as Error).message}` })
        .catch(() => undefined);
    } finally {
      if (runtime.busyJob === jobId) runtime.busyJob = undefined;
      this.sessions.touch(runtime);
    }
  }

  private handle(jobId: string, call: ExecuteCall, promoted: boolean): JobHandle {
    const poll = `${this.settings.serverName}_check_job`;
    const message = promoted
      ? `Execution exceeded ${this.settings.promotionThresholdS}s and was promoted to background. Poll with ${poll}(job_id='${jobId}').`
      : `Code submitted for background execution. Poll with ${poll}(job_id='${jobId}').`;
    return {
      job_id: jobId,
      status: 'running',
      session_id: call.runtime.record.id,
      ...(promoted ? { promoted: true } : {}),
      ...(call.description ? { description: call.description } : {}),
      poll_tool: poll,
      message,
    };
  }
}
