import { Injectable, type OnModuleInit } from '@nestjs/common';
import { StoaMetrics } from '@stoa/activity';
import { JobService, JobStatus } from '@stoa/jobs';
import { KernelService } from '@stoa/kernel';

/** Registers the executor's live gauges: kernels, the warm pool, and jobs and batches by state. */
@Injectable()
export class ExecutorMetrics implements OnModuleInit {
  constructor(
    private readonly metrics: StoaMetrics,
    private readonly kernels: KernelService,
    private readonly jobs: JobService,
  ) {}

  onModuleInit(): void {
    const m = this.metrics;
    m.addCollector(() => {
      const pool = this.kernels.poolStatus();
      m.kernels.set({ state: 'live' }, this.kernels.liveCount);
      m.kernels.set({ state: 'starting' }, pool.starting);
      m.kernels.set({ state: 'in_use' }, this.kernels.inUseCount);
      m.warmPoolReady.set(pool.ready);
      m.warmPoolTarget.set(pool.target);
    });
    m.addCollector(async () => {
      const { jobs, batches } = await this.jobs.counts();
      // Every kind × state is shown, 0 when none is left (not its last count).
      for (const kind of ['background', 'batch_item'])
        for (const state of Object.values(JobStatus)) m.jobs.set({ kind, state }, 0);
      for (const j of jobs) m.jobs.set({ kind: j.kind, state: j.status }, j.count);
      m.batches.set({ state: 'active' }, batches.active);
      m.batches.set({ state: 'cancelled' }, batches.cancelled);
    });
  }
}
