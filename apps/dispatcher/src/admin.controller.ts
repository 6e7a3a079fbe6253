import { Controller, Get, Inject, Param, Post } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { AdminOnly } from '@stoa/auth';
import { NotFoundError } from '@stoa/core';
import { UpstreamPool } from '@stoa/connectors';
import type { DispatcherSettings } from './dispatcher.config';
import { DISPATCHER_SETTINGS } from './dispatcher.tokens';
import { DispatchService } from './dispatch.service';

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
