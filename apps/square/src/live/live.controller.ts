import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Controller, Get, Param, Req, Res } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { AdminOnly, Public, StaticPage } from '@stoa/auth';
import { SseClient } from '@stoa/activity';
import { NotFoundError, StartupRefusedError } from '@stoa/core';
import { LiveFeed } from './live-feed.service';

const FILES: Record<string, string> = {
  'live.html': 'text/html; charset=utf-8',
  'live.js': 'text/javascript; charset=utf-8',
  'live.css': 'text/css; charset=utf-8',
};
const PING_MS = 15_000;
/** A viewer more than a few snapshots (or 8 MiB) behind is dropped; its page reconnects and gets the current one. */
const LIVE_LIMITS = { maxBehindEvents: 4, maxBufferedBytes: 8 * 1024 * 1024 };

/**
 * The read-only live view (the reference's admin TUI, in a browser): a static page (no data in it, so public)
 * whose script reads `GET /admin/v1/square/live`, an SSE stream of snapshots behind the admin check.
 */
@Controller()
export class LiveController {
  private readonly files: StaticPage;

  constructor(private readonly feed: LiveFeed) {
    this.files = new StaticPage(staticDir(), FILES);
  }

  @Public()
  @Get('live')
  page(@Res() res: Response): void {
    this.files.send(res, 'live.html');
  }

  @Public()
  @Get('live/static/:file')
  asset(@Param('file') file: string, @Res() res: Response): void {
    if (!this.files.has(file) || file === 'live.html')
      throw new NotFoundError(`No live view file ${file.slice(0, 100)}.`);
    this.files.send(res, file);
  }

  @ApiTags('square')
  @AdminOnly()
  @Get('admin/v1/square/live')
  @ApiOkResponse({ description: 'text/event-stream: a `snapshot` event now and whenever the square changes' })
  async stream(@Req() req: Request, @Res() res: Response): Promise<void> {
    const client = new SseClient(res, LIVE_LIMITS);
    client.start();
    // Closed before the first snapshot was sent: nothing is left watching.
    let stop = (): void => void (closed = true);
    let closed = false;
    req.on('close', () => stop());
    res.on('error', () => stop());
    let unsubscribe: () => void;
    try {
      unsubscribe = await this.feed.watch((json) => {
        client.signal('snapshot', json);
        if (!client.open) stop(); // a viewer that stopped reading was dropped
      });
    } catch (err) {
      // Headers are sent: the page shows the reason and reconnects.
      client.signal('problem', JSON.stringify({ error: (err as Error).message }));
      client.close();
      return;
    }
    if (closed || !client.open) return unsubscribe();
    const ping = setInterval(() => client.signal('ping'), PING_MS);
    stop = () => {
      clearInterval(ping);
      unsubscribe();
      client.close();
    };
  }
}

/** `static/` beside the app's compiled code (the build copies apps/square/static there). */
function staticDir(): string {
  const dir = resolve(__dirname, '../../static');
  if (!existsSync(join(dir, 'live.html')))
    throw new StartupRefusedError(
      `The live view files (live.html, live.js, live.css) are not in ${dir}. Rebuild with npm run build.`,
    );
  return dir;
}
