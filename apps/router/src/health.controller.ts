import { Controller, Get, HttpException, HttpStatus, Inject } from '@nestjs/common';
import { Public } from '@stoa/auth';
import { UpstreamPool } from '@stoa/connectors';
import type { RouterSettings } from './router.config';
import { ROUTER_SETTINGS } from './router.tokens';

const word = { healthy: 'connected', unavailable: 'unavailable', connecting: 'connecting' } as const;

/** Liveness with every upstream's state (reference shape), and readiness (503 while no upstream is reachable). */
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
  ready() {
    const status = this.pool.status();
    const up = status.filter((s) => s.state === 'healthy').length;
    const body = { status: up ? 'ready' : 'not_ready', upstreams_ready: up, upstreams_total: status.length };
    if (!up) throw new HttpException({ ...body, message: 'No upstream is reachable yet; see /health for each one\'s last error.' }, HttpStatus.SERVICE_UNAVAILABLE);
    return body;
  }
}
