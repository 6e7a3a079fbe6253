import { Controller, Delete, Get, Param, Query } from '@nestjs/common';
import { ApiQuery, ApiTags } from '@nestjs/swagger';
import { AdminOnly } from '@stoa/auth';
import { InvalidInputError, NotFoundError } from '@stoa/core';
import { JobService, JobStatus, type JobRecord } from '@stoa/jobs';

const STATUSES = Object.values(JobStatus) as string[];

function view(j: JobRecord) {
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  return {
    job_id: j.id,
    owner: j.owner,
    kind: j.kind,
    status: j.status,
    session_id: j.sessionId,
    batch_id: j.batchId,
    input_index: j.inputIndex,
    replica: j.replica,
    promoted: j.promoted,
    created_at: iso(j.createdAt),
    started_at: iso(j.startedAt),
    completed_at: iso(j.completedAt),
    error: j.error,
  };
}

/** Operator API for background jobs and parallel batches of every user. */
@ApiTags('jobs')
@AdminOnly()
@Controller('admin/v1')
export class AdminJobsController {
  constructor(private readonly jobs: JobService) {}

  @Get('jobs')
  @ApiQuery({ name: 'owner', required: false })
  @ApiQuery({ name: 'status', required: false, enum: STATUSES })
  @ApiQuery({ name: 'batch_id', required: false })
  async list(@Query('owner') owner?: string, @Query('status') status?: string, @Query('batch_id') batchId?: string) {
    if (status !== undefined && !STATUSES.includes(status))
      throw new InvalidInputError(`Unknown status '${status}'. Use one of: ${STATUSES.join(', ')}.`);
    const jobs = await this.jobs.listJobs({
      owner: owner || undefined,
      status: status as JobStatus | undefined,
      batchId: batchId || undefined,
    });
    return { count: jobs.length, jobs: jobs.map(view) };
  }

  @Get('jobs/:id')
  async get(@Param('id') id: string) {
    const [job] = await this.jobs.listJobs({ id });
    if (!job) throw new NotFoundError(`Job ${id} not found.`);
    return { ...view(job), stdout: job.stdout, stderr: job.stderr, result: job.result, payload: job.payload };
  }

  @Delete('jobs/:id')
  async cancel(@Param('id') id: string) {
    if (!(await this.jobs.cancelJob(id)))
      throw new NotFoundError(`Job ${id} is not running (unknown or already finished).`);
    return { success: true, message: `Job ${id} cancelled` };
  }

  @Get('batches')
  @ApiQuery({ name: 'owner', required: false })
  async batches(@Query('owner') owner?: string) {
    const batches = await this.jobs.listBatches(owner || undefined);
    return {
      count: batches.length,
      batches: batches.map((b) => ({
        batch_id: b.id,
        owner: b.owner,
        parent_session_id: b.parentSessionId,
        total: b.total,
        created_at: new Date(b.createdAt).toISOString(),
        cancelled: b.cancelledAt !== null,
      })),
    };
  }

  @Get('batches/:id')
  async batch(@Param('id') id: string) {
    const jobs = await this.jobs.listJobs({ batchId: id }, 'all');
    if (!jobs.length) throw new NotFoundError(`Batch ${id} not found.`);
    return { batch_id: id, jobs: jobs.map(view) };
  }

  @Delete('batches/:id')
  async cancelBatch(@Param('id') id: string) {
    const jobs = await this.jobs.listJobs({ batchId: id }, 'all');
    if (!jobs.length) throw new NotFoundError(`Batch ${id} not found.`);
    let cancelled = 0;
    for (const j of jobs) if (await this.jobs.cancelJob(j.id)) cancelled++;
    return { success: true, batch_id: id, cancelled };
  }
}
