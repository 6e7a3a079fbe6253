/** `jobs:` config schema and env overrides. */
export { jobsConfigSchema, type JobsConfig } from './job.config';
/** Job and batch records. */
export { JobStatus, batchCounts, isTerminal, type BatchCounts, type BatchRecord, type JobRecord } from './job.types';
/** Job errors. */
export { BatchNotFoundError, JobNotFoundError } from './job.errors';
/** Job migrations for the app's data source. */
export { JOB_MIGRATIONS } from './job.migrations';
/** The job port and its backends. */
export { JOB_QUEUE, type JobProcessor, type JobQueue } from './queue.port';
export { InProcessJobQueue } from './in-process.queue';
export { BullMqJobQueue } from './bullmq.queue';
/** Job and batch service. */
export { JobService, type JobSettings } from './job.service';
export type { JobFilter } from './job.repository';
/** Nest module. */
export { JobsModule, type JobsModuleOptions } from './jobs.module';
