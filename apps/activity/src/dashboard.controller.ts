import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Controller, Get, Inject, Param, Res } from '@nestjs/common';
import type { Response } from 'express';
import { Public } from '@stoa/auth';
import { NotFoundError, StartupRefusedError } from '@stoa/core';
import type { ActivityConfig } from './activity.config';
import { ACTIVITY_CONFIG } from './activity.tokens';

/** Scripts and styles only from this origin, never inline; figures as same-origin images or data URLs; no framing. */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const FILES: Record<string, string> = {
  'index.html': 'text/html; charset=utf-8',
  'dashboard.js': 'text/javascript; charset=utf-8',
  'dashboard.css': 'text/css; charset=utf-8',
};

/** The dashboard: three committed files read once at start, served with a strict CSP (nothing from a CDN). */
@Public()
@Controller()
export class DashboardController {
  private readonly files = new Map<string, Buffer>();

  constructor(@Inject(ACTIVITY_CONFIG) config: ActivityConfig) {
    const dir = dashboardDir(config.dashboard_dir);
    for (const name of Object.keys(FILES)) this.files.set(name, readFileSync(join(dir, name)));
  }

  @Get()
  index(@Res() res: Response): void {
    this.send(res, 'index.html');
  }

  @Get('static/:file')
  asset(@Param('file') file: string, @Res() res: Response): void {
    if (!this.files.has(file) || file === 'index.html')
      throw new NotFoundError(`No dashboard file ${file.slice(0, 100)}.`);
    this.send(res, file);
  }

  private send(res: Response, name: string): void {
    res.setHeader('Content-Type', FILES[name] as string);
    res.setHeader('Content-Security-Policy', DASHBOARD_CSP);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.setHeader('X-Frame-Options', 'DENY');
    res.setHeader('Cache-Control', 'no-cache');
    res.end(this.files.get(name));
  }
}

/** The configured directory, else `../static` from this file (the build copies the files to the same place). */
function dashboardDir(configured: string | undefined): string {
  const candidates = [configured ? resolve(configured) : resolve(__dirname, '../static')];
  const dir = candidates.find((d) => existsSync(join(d, 'index.html')));
  if (!dir)
    throw new StartupRefusedError(
      `The dashboard files (index.html, dashboard.js, dashboard.css) are not in ${candidates.join(' or ')}. Rebuild with npm run build, or set dashboard_dir.`,
    );
  return dir;
}
