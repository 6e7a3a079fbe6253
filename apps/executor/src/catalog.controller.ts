import { Controller, Get, Inject } from '@nestjs/common';
import { Public } from '@stoa/auth';
import { catalogJson } from '@stoa/tools';
import type { ExecutorSettings } from './executor.config';
import { EXECUTOR_SETTINGS } from './executor.tokens';

/** `GET /catalog`: tools, skills and states as JSON for connectors (public, read-only). */
@Public()
@Controller()
export class CatalogController {
  private readonly body: Record<string, unknown>;

  constructor(@Inject(EXECUTOR_SETTINGS) settings: ExecutorSettings) {
    this.body = catalogJson(settings.domain.catalog);
  }

  @Get('catalog')
  catalog(): Record<string, unknown> {
    return this.body;
  }
}
