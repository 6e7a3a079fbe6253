import type { ServerResponse } from 'node:http';
import { All, Controller, Get, Inject, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { Response } from 'express';
import { DataSource } from 'typeorm';
import { ApiOkResponse, ApiQuery, ApiTags } from '@nestjs/swagger';
import { AdminOnly, CurrentPrincipal, Public } from '@stoa/auth';
import { AuditService } from '@stoa/audit';
import { InvalidInputError, NotFoundError, type Principal } from '@stoa/core';
import { probe, readiness, readinessStatus, upstreamChecks, UpstreamPool } from '@stoa/connectors';
import { listedTools, type McpRequest } from '@stoa/mcp';
import type { GatewaySettings } from './gateway.config';
import { GatewayMcpService } from './gateway-mcp.service';
import { GATEWAY_SETTINGS } from './gateway.tokens';
import { RateLimits } from './rate-limits';

/** `/mcp` through the SDK endpoint (upstream tool calls of 2026-07-28 clients take the fast path first). */
@Controller()
export class McpController {
  constructor(private readonly mcp: GatewayMcpService) {}

  @All('mcp')
  async handle(
    @Req() req: McpRequest,
    @Res() res: ServerResponse,
    @CurrentPrincipal() principal: Principal,
  ): Promise<void> {
    await this.mcp.endpoint.handle(req, res, principal);
  }
}

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

/** Operator API: the audit log and the upstream. Needs the admin app role. */
@ApiTags('gateway')
@AdminOnly()
@Controller('admin/v1')
export class AdminController {
  constructor(
    private readonly audit: AuditService,
    private readonly pool: UpstreamPool,
  ) {}

  @Get('audit')
  @ApiQuery({ name: 'principal', required: false })
  @ApiQuery({ name: 'tool', required: false })
  @ApiQuery({
    name: 'outcome',
    required: false,
    enum: ['ok', 'tool_error', 'denied', 'rate_limited', 'upstream_error'],
  })
  @ApiQuery({ name: 'session_id', required: false })
  @ApiQuery({ name: 'since', required: false, description: 'ISO time' })
  @ApiQuery({ name: 'until', required: false, description: 'ISO time' })
  @ApiQuery({ name: 'limit', required: false, description: '1-1000, default 100' })
  @ApiQuery({ name: 'cursor', required: false, description: 'next_cursor of the previous page' })
  @ApiOkResponse({ description: 'Audit records, newest first, with next_cursor for the next page' })
  async list(
    @Query('principal') principal?: string,
    @Query('tool') tool?: string,
    @Query('outcome') outcome?: string,
    @Query('session_id') sessionId?: string,
    @Query('since') since?: string,
    @Query('until') until?: string,
    @Query('limit') limit?: string,
    @Query('cursor') cursor?: string,
  ) {
    const time = (v: string | undefined, name: string) => {
      if (!v) return undefined;
      const t = Date.parse(v);
      if (Number.isNaN(t)) throw new InvalidInputError(`${name} must be an ISO date-time, e.g. 2026-11-30T09:00:00Z.`);
      return t;
    };
    return this.audit.list({
      principal,
      tool,
      outcome,
      session_id: sessionId,
      since: time(since, 'since'),
      until: time(until, 'until'),
      limit: limit ? Number(limit) : 100,
      cursor,
    });
  }

  @Get('upstreams')
  upstreams() {
    return { upstreams: this.pool.status(), caller_clients: this.pool.callerClients };
  }

  @Post('upstreams/:name/reconnect')
  async reconnect(@Param('name') name: string) {
    const u = this.pool.get(name);
    if (!u) throw new NotFoundError(`Unknown upstream '${name}'.`);
    return u.reconnect();
  }
}
