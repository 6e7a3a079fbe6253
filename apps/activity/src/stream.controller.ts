import { Controller, Get, HttpCode, Inject, Param, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AdminOnly, CurrentPrincipal, Public } from '@stoa/auth';
import { NotFoundError, type Principal } from '@stoa/core';
import { canRead, EventHub, EventStore, isEventId, SseClient, type FeedEvent } from '@stoa/activity';
import type { ActivityConfig } from './activity.config';
import { ActivityAuth, STREAM_COOKIE } from './activity-auth';
import { ACTIVITY_CONFIG } from './activity.tokens';

/** Readers: stream tokens, the recent window, the live stream, figures. */
@Controller()
export class StreamController {
  constructor(
    @Inject(ACTIVITY_CONFIG) private readonly config: ActivityConfig,
    private readonly auth: ActivityAuth,
    private readonly store: EventStore,
    private readonly hub: EventHub,
  ) {}

  /** Sets the stream cookie for the caller (their own sessions; all of them with the admin role). */
  @Post('stream-token')
  @HttpCode(200)
  async token(@CurrentPrincipal() p: Principal, @Req() req: Request, @Res({ passthrough: true }) res: Response) {
    return this.issue(p, false, req, res);
  }

  /** An admin stream cookie (no-op mode: loopback with the admin token). */
  @AdminOnly()
  @Post('admin/v1/stream-token')
  @HttpCode(200)
  async adminToken(@CurrentPrincipal() p: Principal, @Req() req: Request, @Res({ passthrough: true }) res: Response) {
    return this.issue(p, true, req, res);
  }

  @Public()
  @Get('events/recent')
  async recent(@Req() req: Request): Promise<FeedEvent[]> {
    const reader = await this.auth.reader(req);
    return this.store.recent(reader, this.window());
  }

  @Public()
  @Get('figures/:id')
  async figure(@Req() req: Request, @Res() res: Response, @Param('id') id: string): Promise<void> {
    const reader = await this.auth.reader(req);
    const fig = /^[0-9a-f]{64}$/.test(id) ? await this.store.figure(reader, id) : undefined;
    if (!fig) throw new NotFoundError(`No figure ${id.slice(0, 64)} (it may be past retention).`);
    res.setHeader('Content-Type', fig.mimeType);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    // Opened on its own, an SVG is a document: sandboxed, no scripts, its own origin.
    res.setHeader('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; sandbox");
    res.setHeader('Cache-Control', 'private, max-age=86400, immutable');
    res.end(fig.bytes);
  }

  /** SSE: the recent window (or what came after Last-Event-ID), then live events, pings, token expiry. */
  @Public()
  @Get('stream')
  async stream(@Req() req: Request, @Res() res: Response): Promise<void> {
    const reader = await this.auth.reader(req);
    const s = this.config.stream;
    const client = new SseClient(res, {
      maxBehindEvents: s.client_buffer_events,
      maxBufferedBytes: s.client_buffer_bytes,
    });
    const lastId = lastEventId(req);
    // Subscribed before the replay query: what arrives meanwhile waits (bounded) and is sent after, once.
    let held: FeedEvent[] | undefined = [];
    const timers: { ping?: NodeJS.Timeout; expiry?: NodeJS.Timeout } = {};
    let unsubscribe = (): void => undefined;
    const stop = (): void => {
      unsubscribe();
      clearInterval(timers.ping);
      clearTimeout(timers.expiry);
      client.close();
    };
    unsubscribe = this.hub.subscribe((events) => {
      const mine = events.filter((e) => canRead(reader, e));
      if (!held) client.events(mine);
      else if (held.push(...mine) > s.client_buffer_events) client.close();
      if (!client.open) stop();
    });
    timers.ping = setInterval(() => client.signal('ping'), s.heartbeat_seconds * 1000);
    timers.expiry = setTimeout(
      () => {
        client.signal('token_expired');
        stop();
      },
      Math.max(0, reader.expiresAt - Date.now()),
    );
    req.on('close', stop);
    client.start();
    try {
      const replay = await this.store.recent(reader, { ...this.window(), afterId: lastId });
      const sent = new Set(replay.map((e) => e.id));
      client.events(replay);
      client.signal('replayed', JSON.stringify({ count: replay.length }));
      const pending = held;
      held = undefined;
      client.events(pending.filter((e) => !sent.has(e.id)));
    } catch {
      stop();
    }
  }

  private window(): { limit: number; sinceMs: number } {
    return {
      limit: this.config.stream.replay_limit,
      sinceMs: Date.now() - this.config.stream.replay_hours * 3_600_000,
    };
  }

  private async issue(p: Principal, admin: boolean, req: Request, res: Response) {
    const { token, ttl, admin: all } = await this.auth.mint(p, admin);
    const secure = req.secure ? '; Secure' : '';
    res.setHeader(
      'Set-Cookie',
      `${STREAM_COOKIE}=${token}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${ttl}${secure}`,
    );
    res.setHeader('Cache-Control', 'no-store');
    return { status: 'ok', user: p.id, admin: all, expires_in: ttl };
  }
}

/** `Last-Event-ID` (EventSource sends it on reconnect) or `?last_event_id=`; anything not an event id is ignored. */
function lastEventId(req: Request): string | undefined {
  const h = req.headers['last-event-id'];
  const q = req.query.last_event_id;
  const v = typeof h === 'string' ? h : typeof q === 'string' ? q : undefined;
  return v && isEventId(v) ? v : undefined;
}
