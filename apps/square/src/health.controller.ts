import { Controller, Get, HttpStatus, Inject, Res } from '@nestjs/common';
import type { Response } from 'express';
import { DataSource } from 'typeorm';
import { Public } from '@stoa/auth';
import { EventBus } from '@stoa/coordination';
import { runReadiness, type ReadinessCheck } from '@stoa/core';
import type { SquareSettings } from './square.config';
import { SQUARE_SETTINGS } from './square.tokens';

/** Liveness and readiness (public). */
@Public()
@Controller()
export class HealthController {
  constructor(
    @Inject(SQUARE_SETTINGS) private readonly settings: SquareSettings,
    private readonly db: DataSource,
    private readonly bus: EventBus,
  ) {}

  @Get(['health', 'healthz'])
  health() {
    return {
      status: 'healthy',
      square: this.settings.config.name,
      replica: this.settings.coordination.replica,
      event_bus: this.bus.backend,
    };
  }

  /** The database and (with replicas) Redis, each named; 503 when one is down. */
  @Get('health/ready')
  async ready(@Res({ passthrough: true }) res: Response) {
    const checks: ReadinessCheck[] = [
      { name: 'database', check: async () => (await this.db.query('SELECT 1'), { kind: this.db.options.type }) },
    ];
    if (this.bus.backend === 'redis')
      checks.push({ name: 'redis', check: async () => ({ reply: await this.bus.ping() }) });
    const { ready, checks: results } = await runReadiness(checks);
    if (!ready) res.status(HttpStatus.SERVICE_UNAVAILABLE);
    return { status: ready ? 'ready' : 'not_ready', square: this.settings.config.name, checks: results };
  }
}
