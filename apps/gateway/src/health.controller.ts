import { Controller, Get, Inject, Res } from '@nestjs/common';
import type { Response } from 'express';
import { DataSource } from 'typeorm';
import { Public } from '@stoa/auth';
import { probe, readiness, readinessStatus, upstreamChecks, UpstreamPool } from '@stoa/connectors';
import { listedTools } from '@stoa/mcp';
import type { GatewaySettings } from './gateway.config';
import { GatewayMcpService } from './gateway-mcp.service';
import { GATEWAY_SETTINGS } from './gateway.tokens';
import { RateLimits } from './rate-limits.service';

/** Liveness (upstream state in the reference's shape), readiness, and the catalog of what the policy allows. */
@Public()
@Controller()
export class HealthController {
  constructor(
    @Inject(GATEWAY_SETTINGS) private readonly settings: GatewaySettings,
    private readonly pool: UpstreamPool,
    private readonly mcp: GatewayMcpService,
    private readonly db: DataSource,
    private readonly limits: RateLimits,
  ) {}

  @Get(['health', 'healthz'])
  health() {
    const [u] = this.pool.status();
    return {
      status: 'healthy',
      server: this.settings.config.name,
      type: 'GatewayServer',
      upstreams: u ? { [u.name]: u.state === 'healthy' ? 'connected' : u.state } : {},
      details: this.pool.status(),
    };
  }

  /** Readiness: the audit database, Redis (when configured) and the upstream, each named; 503 when one is down. */
  @Get('health/ready')
  async ready(@Res({ passthrough: true }) res: Response) {
    const redis = this.limits.ping();
    const [database, redisCheck] = await Promise.all([
      probe(() => this.db.query('SELECT 1'), { kind: this.db.options.type }),
      redis ? probe(() => redis) : undefined,
    ]);
    const body = readiness(this.settings.config.name, {
      database,
      ...(redisCheck ? { redis: redisCheck } : {}),
      upstreams: upstreamChecks(this.pool),
    });
    res.status(readinessStatus(body));
    return body;
  }

  @Get('catalog')
  catalog() {
    const u = this.pool.upstreams()[0];
    const c = u?.catalog;
    return {
      server_name: this.settings.config.name,
      upstream_server: c?.serverName ?? null,
      tools: c?.domain.tools ?? [],
      skills: c?.domain.skills ?? [],
      states: c?.domain.states ?? [],
      mcp_tools: listedTools(this.mcp.tools()),
    };
  }
}
