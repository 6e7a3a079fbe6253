import { Controller, Get, Param, Post, Query } from '@nestjs/common';
import { ApiOkResponse, ApiQuery, ApiTags } from '@nestjs/swagger';
import { AdminOnly } from '@stoa/auth';
import { AuditService } from '@stoa/audit';
import { InvalidInputError, NotFoundError } from '@stoa/core';
import { UpstreamPool } from '@stoa/connectors';

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
