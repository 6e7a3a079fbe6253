import { Controller, Get, Inject } from '@nestjs/common';
import { Public } from '@stoa/auth';
import { KernelService } from '@stoa/kernel';
import { EXECUTOR_SETTINGS } from './executor.tokens';
import type { ExecutorSettings } from './executor.config';

/** Liveness (public). */
@Public()
@Controller()
export class HealthController {
  constructor(
    @Inject(EXECUTOR_SETTINGS) private readonly settings: ExecutorSettings,
    private readonly kernels: KernelService,
  ) {}

  @Get(['health', 'healthz'])
  health() {
    return {
      status: 'healthy',
      environment_ready: true,
      server: this.settings.config.name,
      replica: this.settings.replica,
      python: this.kernels.python.version,
      kernels: this.kernels.liveCount,
    };
  }
}
