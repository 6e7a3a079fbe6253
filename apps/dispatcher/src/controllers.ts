import type { ServerResponse } from 'node:http';
import { All, Controller, Get, Inject, Param, Post, Req, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { AdminOnly, CurrentPrincipal, Public } from '@stoa/auth';
import { NotFoundError, type Principal } from '@stoa/core';
import { probe, readiness, readinessStatus, upstreamChecks, UpstreamPool } from '@stoa/connectors';
import { listedTools, type McpRequest } from '@stoa/mcp';
import type { DispatcherSettings } from './dispatcher.config';
import { DispatcherMcpService } from './dispatcher-mcp.service';
import { DISPATCHER_SETTINGS } from './dispatcher.tokens';
import { DispatchService } from './dispatch.service';

@Controller()
export class McpController {
  constructor(private readonly mcp: DispatcherMcpService) {}

  @All('mcp')
  async handle(
    @Req() req: McpRequest,
    @Res() res: ServerResponse,
    @CurrentPrincipal() principal: Principal,
  ): Promise<void> {
    await this.mcp.endpoint.handle(req, res, principal);
  }
}

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

/** Operator API for workers: health, in-flight calls, drain / undrain. Needs the admin app role. */
@ApiTags('workers')
@AdminOnly()
@Controller('admin/v1/workers')
export class AdminWorkersController {
  constructor(
    private readonly pool: UpstreamPool,
    private readonly dispatch: DispatchService,
    @Inject(DISPATCHER_SETTINGS) private readonly settings: DispatcherSettings,
  ) {}

  @Get()
  @ApiOkResponse({ description: 'Every worker: health, replica, weight, calls in flight, drained' })
  list() {
    return { workers: this.pool.status().map((s) => this.view(s.name)) };
  }

  @Post(':name/drain')
  @ApiOkResponse({ description: 'No new sessions go to this worker; its existing sessions keep being served' })
  drain(@Param('name') name: string) {
    this.find(name);
    this.dispatch.balancer.drained.add(name);
    return this.view(name);
  }

  @Post(':name/undrain')
  undrain(@Param('name') name: string) {
    this.find(name);
    this.dispatch.balancer.drained.delete(name);
    return this.view(name);
  }

  private find(name: string) {
    const u = this.pool.get(name);
    if (!u)
      throw new NotFoundError(
        `Unknown worker '${name}'. Known: ${this.pool
          .upstreams()
          .map((x) => x.name)
          .join(', ')}.`,
      );
    return u;
  }

  private view(name: string) {
    const s = this.find(name).status();
    const w = this.settings.config.workers.find((x) => x.name === name);
    return {
      name,
      url: s.url,
      state: s.state,
      replica: s.replica,
      weight: w?.weight ?? 1,
      in_flight: this.dispatch.balancer.inFlight.get(name) ?? 0,
      drained: this.dispatch.balancer.drained.has(name),
      last_error: s.last_error,
      latency_ms: s.latency_ms,
    };
  }
}
