import { Controller, Get, Inject, Res } from '@nestjs/common';
import type { Response } from 'express';
import { Public } from '@stoa/auth';
import { probe, readiness, readinessStatus, upstreamChecks, UpstreamPool } from '@stoa/connectors';
import { listedTools } from '@stoa/mcp';
import type { DispatcherSettings } from './dispatcher.config';
import { DispatcherMcpService } from './dispatcher-mcp.service';
import { DISPATCHER_SETTINGS } from './dispatcher.tokens';
import { DispatchService } from './dispatch.service';

/** Liveness with each worker's state, readiness, and the workers' catalog. */
@Public()
@Controller()
export class HealthController {
  constructor(
    @Inject(DISPATCHER_SETTINGS) private readonly settings: DispatcherSettings,
    private readonly pool: UpstreamPool,
    private readonly mcp: DispatcherMcpService,
    private readonly dispatch: DispatchService,
  ) {}

  @Get(['health', 'healthz'])
  health() {
    const c = this.settings.config;
    return {
      status: 'healthy',
      server: c.name,
      type: 'DispatcherServer',
      strategy: c.strategy,
      workers: Object.fromEntries(
        this.pool.status().map((s) => [s.name, s.state === 'healthy' ? 'healthy' : 'unhealthy']),
      ),
    };
  }

  /** Readiness: every worker and the affinity Redis (when configured), each named; 503 when one is down. */
  @Get('health/ready')
  async ready(@Res({ passthrough: true }) res: Response) {
    const ping = this.dispatch.store.ping();
    const redis = ping ? await probe(() => ping) : undefined;
    const body = readiness(this.settings.config.name, {
      ...(redis ? { redis } : {}),
      workers: upstreamChecks(this.pool),
    });
    res.status(readinessStatus(body));
    return body;
  }

  @Get('catalog')
  catalog() {
    const c = this.pool.upstreams().find((u) => u.catalog)?.catalog;
    return {
      server_name: c?.serverName ?? this.settings.config.name,
      tools: c?.domain.tools ?? [],
      skills: c?.domain.skills ?? [],
      states: c?.domain.states ?? [],
      mcp_tools: listedTools(this.mcp.tools()),
    };
  }
}
