import { Controller, Get, Inject, Res } from '@nestjs/common';
import type { Response } from 'express';
import { Public } from '@stoa/auth';
import { readiness, readinessStatus, upstreamChecks, UpstreamPool } from '@stoa/connectors';
import type { RouterSettings } from './router.config';
import { ROUTER_SETTINGS } from './router.tokens';

const word = { healthy: 'connected', unavailable: 'unavailable', connecting: 'connecting' } as const;

/** Liveness with every upstream's state (reference shape), and readiness (503 while any upstream is down). */
@Public()
@Controller()
export class HealthController {
  constructor(
    @Inject(ROUTER_SETTINGS) private readonly settings: RouterSettings,
    private readonly pool: UpstreamPool,
  ) {}

  @Get(['health', 'healthz'])
  health() {
    const status = this.pool.status();
    return {
      status: 'healthy',
      server: this.settings.config.name,
      type: 'RouterServer',
      upstreams: Object.fromEntries(status.map((s) => [s.name, word[s.state]])),
      details: status,
    };
  }

  @Get('health/ready')
  ready(@Res({ passthrough: true }) res: Response) {
    const body = readiness(this.settings.config.name, { upstreams: upstreamChecks(this.pool) });
    res.status(readinessStatus(body));
    return body;
  }
}
