import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Controller, Get, Inject, Param, Res } from '@nestjs/common';
import type { Response } from 'express';
import { Public, StaticPage } from '@stoa/auth';
import { NotFoundError, StartupRefusedError } from '@stoa/core';
import type { ActivityConfig } from './activity.config';
import { ACTIVITY_CONFIG } from './activity.tokens';

const FILES: Record<string, string> = {
  'index.html': 'text/html; charset=utf-8',
  'dashboard.js': 'text/javascript; charset=utf-8',
  'cards.js': 'text/javascript; charset=utf-8',
  'dashboard.css': 'text/css; charset=utf-8',
};

/** The dashboard: four committed files read once at start, served with a strict CSP (nothing from a CDN). */
@Public()
@Controller()
export class DashboardController {
  private readonly page: StaticPage;

  constructor(@Inject(ACTIVITY_CONFIG) config: ActivityConfig) {
    this.page = new StaticPage(dashboardDir(config.dashboard_dir), FILES);
  }

  @Get()
  index(@Res() res: Response): void {
    this.page.send(res, 'index.html');
  }

  @Get('static/:file')
  asset(@Param('file') file: string, @Res() res: Response): void {
    if (!this.page.has(file) || file === 'index.html')
      throw new NotFoundError(`No dashboard file ${file.slice(0, 100)}.`);
    this.page.send(res, file);
  }
}

/** The configured directory, else `../static` from this file (the build copies the files to the same place). */
function dashboardDir(configured: string | undefined): string {
  const candidates = [configured ? resolve(configured) : resolve(__dirname, '../static')];
  const dir = candidates.find((d) => existsSync(join(d, 'index.html')));
  if (!dir)
    throw new StartupRefusedError(
      `The dashboard files (index.html, dashboard.js, cards.js, dashboard.css) are not in ${candidates.join(' or ')}. Rebuild with npm run build, or set dashboard_dir.`,
    );
  return dir;
}
