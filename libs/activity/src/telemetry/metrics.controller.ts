import { Controller, Get, Header, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AdminOnly, ForbiddenError, isLoopback, Public } from '@stoa/auth';
import { StoaMetrics } from './stoa-metrics';

async function scrape(metrics: StoaMetrics, res: Response): Promise<void> {
  const { contentType, body } = await metrics.render();
  res.setHeader('content-type', contentType);
  res.send(body);
}

/** `GET /metrics` guarded like /admin/v1 (admin role; no-op mode: loopback and the admin token). */
@Controller()
@AdminOnly()
export class AdminMetricsController {
  constructor(private readonly metrics: StoaMetrics) {}

  @Get('metrics')
  @Header('cache-control', 'no-store')
  async scrape(@Res() res: Response): Promise<void> {
    await scrape(this.metrics, res);
  }
}

/** `GET /metrics` for any caller on this host (`metrics.access: loopback`), e.g. a local Prometheus agent. */
@Controller()
@Public()
export class LoopbackMetricsController {
  constructor(private readonly metrics: StoaMetrics) {}

  @Get('metrics')
  @Header('cache-control', 'no-store')
  async scrape(@Req() req: Request, @Res() res: Response): Promise<void> {
    if (!isLoopback(req.socket.remoteAddress?.replace(/^::ffff:/, '') ?? ''))
      throw new ForbiddenError(
        'metrics.access is loopback: /metrics answers callers on this host only. Scrape from here, or set metrics.access: admin and scrape with the admin role.',
      );
    await scrape(this.metrics, res);
  }
}
