import { Controller, Get, Param, Post } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { AdminOnly } from '@stoa/auth';
import { NotFoundError } from '@stoa/core';
import { UpstreamPool } from '@stoa/connectors';

/** Operator API for the upstreams (`/admin/v1/upstreams`). Needs the admin app role. */
@ApiTags('upstreams')
@AdminOnly()
@Controller('admin/v1/upstreams')
export class AdminUpstreamsController {
  constructor(private readonly pool: UpstreamPool) {}

  @Get()
  @ApiOkResponse({
    description: 'Every upstream: state, last error, latency of the last health check, catalog version',
  })
  list() {
    return {
      count: this.pool.upstreams().length,
      caller_clients: this.pool.callerClients,
      upstreams: this.pool.status(),
    };
  }

  @Get(':name')
  get(@Param('name') name: string) {
    return this.find(name).status();
  }

  @Post(':name/reconnect')
  @ApiOkResponse({ description: 'Reconnects now and refetches the catalog; answers with the resulting status' })
  async reconnect(@Param('name') name: string) {
    return this.find(name).reconnect();
  }

  private find(name: string) {
    const u = this.pool.get(name);
    if (!u)
      throw new NotFoundError(
        `Unknown upstream '${name}'. Known: ${this.pool
          .upstreams()
          .map((x) => x.name)
          .join(', ')}.`,
      );
    return u;
  }
}
