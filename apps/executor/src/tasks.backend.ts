import { Injectable } from '@nestjs/common';
import type { Principal } from '@stoa/core';
import { ExecutionService } from '@stoa/execution';
import { isTerminal, JobNotFoundError, JobService, JobStatus, type JobRecord } from '@stoa/jobs';
import type { TaskBackend, TaskView } from '@stoa/mcp';

const POLL_MS = 500;

/** Background jobs seen as MCP tasks (Tasks extension): the task id is the job id. */
@Injectable()
export class JobTasks implements TaskBackend {
  constructor(
    private readonly jobs: JobService,
    private readonly execution: ExecutionService,
  ) {}

  async get(principal: Principal, taskId: string): Promise<TaskView | undefined> {
    const job = await this.find(principal, taskId);
    return job && this.view(job);
  }

  async cancel(principal: Principal, taskId: string): Promise<TaskView | undefined> {
    if (!(await this.find(principal, taskId))) return undefined;
    await this.execution.cancelJob(principal, taskId);
    return this.get(principal, taskId);
  }

  /** The task view of a job (completed jobs carry the execute result; a failed run is an isError result). */
  view(job: JobRecord): TaskView {
    const iso = (ms: number) => new Date(ms).toISOString();
    const base = {
      taskId: job.id,
      createdAt: iso(job.createdAt),
      lastUpdatedAt: iso(job.completedAt ?? job.startedAt ?? job.createdAt),
      ttlMs: this.jobs.settings.retentionMs,
      pollIntervalMs: POLL_MS,
    };
    if (!isTerminal(job.status)) return { ...base, status: 'working' };
    if (job.status === JobStatus.cancelled)
      return { ...base, status: 'cancelled', statusMessage: job.error ?? 'cancelled' };
    if (job.result)
      return {
        ...base,
        status: 'completed',
        result: {
          text: JSON.stringify({ ...job.result, job_id: job.id }, null, 2),
          isError: job.status === JobStatus.failed,
        },
      };
    return {
      ...base,
      status: 'failed',
      statusMessage: job.error ?? 'failed',
      error: { code: -32603, message: job.error ?? 'The job failed.' },
    };
  }

  private async find(principal: Principal, id: string): Promise<JobRecord | undefined> {
    try {
      return await this.jobs.getJob(principal, id);
    } catch (err) {
      if (err instanceof JobNotFoundError) return undefined;
      throw err;
    }
  }
}
