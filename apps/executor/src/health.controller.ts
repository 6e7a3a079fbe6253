import { Controller, Get, HttpStatus, Inject, Res } from '@nestjs/common';
import type { Response } from 'express';
import { DataSource } from 'typeorm';
import { Public } from '@stoa/auth';
import { runReadiness, type ReadinessCheck } from '@stoa/core';
import { JOB_QUEUE, type JobQueue } from '@stoa/jobs';
import { KernelService } from '@stoa/kernel';
import { EXECUTOR_SETTINGS } from './executor.tokens';
import type { ExecutorSettings } from './executor.config';
import { CatalogDocument } from './catalog.controller';

/** Liveness and readiness (public). */
@Public()
@Controller()
export class HealthController {
  constructor(
    @Inject(EXECUTOR_SETTINGS) private readonly settings: ExecutorSettings,
    private readonly kernels: KernelService,
    private readonly catalog: CatalogDocument,
    private readonly db: DataSource,
    @Inject(JOB_QUEUE) private readonly queue: JobQueue,
  ) {}

  /** Liveness: the process answers. `environment_ready` says whether kernels can be started right now. */
  @Get(['health', 'healthz'])
  health() {
    const pool = this.kernels.poolStatus();
    return {
      status: 'healthy',
      environment_ready: pool.healthy,
      server: this.settings.config.name,
      replica: this.settings.replica,
      python: this.kernels.python.version,
      kernels: this.kernels.inUseCount,
      sandbox: this.kernels.sandbox.describe(),
      warm_pool: pool,
      catalog_version: this.catalog.version,
    };
  }

  /** Readiness: the database, Redis (when jobs use it) and the kernel pool, each named; 503 when one is down. */
  @Get('health/ready')
  async ready(@Res({ passthrough: true }) res: Response) {
    const { ready, checks } = await runReadiness(this.checks());
    if (!ready) res.status(HttpStatus.SERVICE_UNAVAILABLE);
    return { status: ready ? 'ready' : 'not_ready', server: this.settings.config.name, checks };
  }

  private checks(): ReadinessCheck[] {
    const checks: ReadinessCheck[] = [
      { name: 'database', check: async () => (await this.db.query('SELECT 1'), { kind: this.db.options.type }) },
      {
        name: 'kernel_pool',
        check: () => {
          const pool = this.kernels.poolStatus();
          if (!pool.healthy)
            return Promise.reject(new Error(`kernels fail to start: ${pool.last_error ?? 'unknown error'}`));
          return Promise.resolve({ ready: pool.ready, size: pool.size });
        },
      },
    ];
    if (this.queue.backend === 'bullmq') checks.push({ name: 'redis', check: () => this.queue.ping() });
    return checks;
  }
}
