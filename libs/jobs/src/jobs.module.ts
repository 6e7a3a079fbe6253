import { type DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { BullMqJobQueue } from './bullmq.queue';
import type { JobsConfig } from './job.config';
import { BatchEntity, JobEntity } from './job.entity';
import { JobRepository } from './job.repository';
import { JOB_SETTINGS, JobService, type JobSettings } from './job.service';
import { InProcessJobQueue } from './in-process.queue';
import { JOB_QUEUE, type JobQueue } from './queue.port';

export interface JobsModuleOptions {
  config: JobsConfig;
  settings: JobSettings;
  /** Redis key prefix shared by the replicas of one server. */
  prefix: string;
}

/** Job records and the job queue (BullMQ when Redis is configured, else in-process). */
@Module({})
export class JobsModule {
  static forRoot(o: JobsModuleOptions): DynamicModule {
    return {
      module: JobsModule,
      global: true,
      imports: [TypeOrmModule.forFeature([JobEntity, BatchEntity])],
      providers: [
        { provide: JOB_SETTINGS, useValue: o.settings },
        JobRepository,
        {
          provide: JOB_QUEUE,
          inject: [JobRepository],
          useFactory: async (repo: JobRepository): Promise<JobQueue> => {
            if (!o.config.redis_url) return new InProcessJobQueue();
            const q = new BullMqJobQueue({
              url: o.config.redis_url,
              prefix: o.prefix,
              lockDurationMs: o.config.lock_duration_seconds * 1000,
              stalledIntervalMs: o.config.stalled_interval_seconds * 1000,
              onLost: (jobId, reason) =>
                void repo.transition(jobId, ['queued', 'running'], {
                  status: 'failed',
                  completedAt: Date.now(),
                  error: `The replica running this item stopped and it could not be recovered (${reason}). Run it again.`,
                }),
            });
            await q.init();
            return q;
          },
        },
        JobService,
      ],
      exports: [JobService, JOB_QUEUE],
    };
  }
}
