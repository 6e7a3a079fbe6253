import { Body, Controller, Get, HttpCode, Inject, Post, Req } from '@nestjs/common';
import type { Request } from 'express';
import { Public } from '@stoa/auth';
import { EventHub, EventStore, StoaMetrics } from '@stoa/activity';
import type { ActivityConfig } from './activity.config';
import { ActivityAuth } from './activity-auth';
import { ACTIVITY_CONFIG } from './activity.tokens';
import { parseBatch } from './ingest';

/** Ingest from Stoa apps (writer auth) and liveness. */
@Public()
@Controller()
export class EventsController {
  constructor(
    @Inject(ACTIVITY_CONFIG) private readonly config: ActivityConfig,
    private readonly auth: ActivityAuth,
    private readonly store: EventStore,
    private readonly hub: EventHub,
    private readonly metrics: StoaMetrics,
  ) {}

  /** A batch of events: validated whole, stored in one transaction, then streamed live. */
  @Post('events')
  @HttpCode(200)
  async ingest(@Req() req: Request, @Body() body: unknown): Promise<{ status: 'ok'; stored: number }> {
    await this.auth.checkWriter(req);
    const events = parseBatch(body, this.config.ingest);
    const stored = await this.store.ingest(events);
    this.hub.publish(stored);
    for (const e of stored) this.metrics.activityIngested.inc({ type: e.type });
    return { status: 'ok', stored: stored.length };
  }

  @Get(['health', 'healthz'])
  health(): { status: 'ok'; stream_clients: number } {
    return { status: 'ok', stream_clients: this.hub.size };
  }
}
