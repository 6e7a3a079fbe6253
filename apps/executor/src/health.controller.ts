import { Controller, Get, HttpException, HttpStatus, Inject } from '@nestjs/common';
import { Public } from '@stoa/auth';
import { KernelService } from '@stoa/kernel';
import { EXECUTOR_SETTINGS } from './executor.tokens';
import type { ExecutorSettings } from './executor.config';
import { CatalogDocument } from './catalog.controller';

/** Liveness (public). */
@Public()
@Controller()
export class HealthController {
  constructor(
    @Inject(EXECUTOR_SETTINGS) private readonly settings: ExecutorSettings,
    private readonly kernels: KernelService,
    private readonly catalog: CatalogDocument,
  ) {}

  @Get(['health', 'healthz'])
  health() {
    return {
      status: 'healthy',
      environment_ready: true,
      server: this.settings.config.name,
      replica: this.settings.replica,
      python: this.kernels.python.version,
      kernels: this.kernels.inUseCount,
      sandbox: this.kernels.sandbox.describe(),
      warm_pool: this.kernels.poolStatus(),
      catalog_version: this.catalog.version,
    };
  }

  /** Readiness: 503 while the warm pool keeps failing to start kernels (the sandbox or interpreter broke). */
  @Get('health/ready')
  ready() {
    const pool = this.kernels.poolStatus();
    const body = { status: pool.healthy ? 'ready' : 'not_ready', server: this.settings.config.name, warm_pool: pool };
    if (!pool.healthy) throw new HttpException(body, HttpStatus.SERVICE_UNAVAILABLE);
    return body;
  }
}
