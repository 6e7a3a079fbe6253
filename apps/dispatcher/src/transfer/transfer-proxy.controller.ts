import { Controller, Get, Inject, Param, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { CurrentPrincipal, Public } from '@stoa/auth';
import type { Principal } from '@stoa/core';
import { UpstreamPool, type Upstream } from '@stoa/connectors';
import {
  capBody,
  decodeObjectFields,
  isBinaryObject,
  OBJECT_FIELDS_HEADER,
  RECEIVE_FORMATS,
  TransferTooLargeError,
} from '@stoa/transfer';
import type { DispatcherSettings } from '../dispatcher.config';
import { DISPATCHER_SETTINGS } from '../dispatcher.tokens';
import { DispatchService, NO_WORKERS } from '../dispatch.service';
import { HeldBody } from './held-body';
import { SessionOfBody } from './session-of-body';

/** Headers of a worker's download answer that go back to the caller. */
const DOWNLOAD_HEADERS = [
  'content-type',
  'content-length',
  'content-disposition',
  'cache-control',
  'x-content-type-options',
];
/** Request headers relayed to the worker with an object transfer (authorization is the worker's own). */
const TRANSFER_HEADERS = ['content-type', 'content-length', OBJECT_FIELDS_HEADER, 'traceparent', 'tracestate'];

/**
 * The executor's HTTP endpoints outside `/mcp`, routed to the worker that owns the session: download links
 * (`GET /artifacts/{session}/…`, a capability URL the worker checks) and object transfers
 * (`POST /object-transfer/receive`, routed by the body's `session_id`, read as the body streams). Workers behind a
 * dispatcher set `server.public_url` to the dispatcher's URL so the links they hand out come here.
 */
@ApiExcludeController()
@Controller()
export class TransferProxyController {
  constructor(
    private readonly dispatch: DispatchService,
    private readonly pool: UpstreamPool,
    @Inject(DISPATCHER_SETTINGS) private readonly settings: DispatcherSettings,
  ) {}

  /** A link to an unknown session, or one whose worker is down, answers the worker's own 404. */
  @Public()
  @Get('artifacts/:session/*rest')
  async download(@Param('session') session: string, @Req() req: Request, @Res() res: Response): Promise<void> {
    const worker = this.dispatch.ownerOf(session);
    if (!worker?.healthy) return void res.status(404).json({ error: 'artifact not found' });
    const ac = new AbortController();
    res.once('close', () => res.writableFinished || ac.abort());
    try {
      const r = await worker.http.request({ method: 'GET', path: req.originalUrl, headers: {}, signal: ac.signal });
      res.status(r.statusCode);
      for (const h of DOWNLOAD_HEADERS) if (r.headers[h] !== undefined) res.setHeader(h, r.headers[h]);
      await pipeline(r.body, res);
    } catch (err) {
      if (!res.headersSent) this.unreachable(res, worker, err);
      else res.destroy();
    }
  }

  /** The formats the workers read (every worker is a Stoa executor, so binary too). */
  @Public()
  @Get('object-transfer/receive')
  formats(): typeof RECEIVE_FORMATS {
    return RECEIVE_FORMATS;
  }

  @Post('object-transfer/receive')
  async receive(@CurrentPrincipal() principal: Principal, @Req() req: Request, @Res() res: Response): Promise<void> {
    const cap = this.settings.config.transfer_max_mb * 1024 * 1024;
    const refuse = (status: number, error: string) => {
      res.setHeader('connection', 'close');
      res.on('finish', () => req.destroy());
      res.status(status).json({ success: false, error });
    };
    const tooLarge = () =>
      refuse(413, `Payload exceeds maximum transfer size (this dispatcher relays up to ${cap >> 20} MB).`);
    if (Number(req.headers['content-length'] ?? 0) > cap) return tooLarge();
    const held = new HeldBody();
    try {
      const sid = isBinaryObject(req.headers['content-type'])
        ? this.sessionOfHeader(req)
        : await this.sessionOf(req, held, cap);
      if (sid === null) return tooLarge();
      const worker = sid ? this.dispatch.ownerOf(sid) : undefined;
      if (sid && worker && !worker.healthy)
        return refuse(
          503,
          `Worker '${worker.name}' that holds session ${sid} is unavailable; retry later, or send without session_id to load the object into a new session.`,
        );
      // No id, or an id no worker owns: any worker answers (an unknown id exactly as an unknown id).
      const target = worker ?? this.dispatch.balancer.pick();
      if (!target) return refuse(503, NO_WORKERS);
      await this.relay(target, principal, req, res, held, cap, tooLarge);
    } finally {
      held.dispose();
    }
  }

  /** A binary body's session_id is in its fields header (an unreadable header: any worker refuses it with the reason). */
  private sessionOfHeader(req: Request): string | undefined {
    try {
      const sid = decodeObjectFields(req.headers[OBJECT_FIELDS_HEADER]).session_id;
      return typeof sid === 'string' && sid ? sid : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * Reads the body until its top-level `session_id` is known (or the body ends), holding what was read; resolves
   * the id, `undefined` for none, or `null` when the body grew past the cap first.
   */
  private sessionOf(req: Request, held: HeldBody, cap: number): Promise<string | undefined | null> {
    const scan = new SessionOfBody();
    return new Promise((resolve, reject) => {
      const stop = (value: string | undefined | null) => {
        req.off('data', onData);
        req.off('end', onEnd);
        req.off('error', reject);
        req.pause();
        resolve(value);
      };
      const onData = (chunk: Buffer) => {
        const more = held.push(chunk);
        if (held.bytes > cap) return stop(null);
        scan.feed(chunk);
        if (scan.done) return stop(scan.found);
        if (!more) {
          req.pause();
          void held.drained().then(() => req.resume(), reject);
        }
      };
      const onEnd = () => (scan.end(), stop(scan.found));
      req.on('data', onData);
      req.once('end', onEnd);
      req.once('error', reject);
    });
  }

  private async relay(
    worker: Upstream,
    principal: Principal,
    req: Request,
    res: Response,
    held: HeldBody,
    cap: number,
    tooLarge: () => void,
  ) {
    const headers: Record<string, string> = {};
    for (const h of TRANSFER_HEADERS) if (typeof req.headers[h] === 'string') headers[h] = req.headers[h];
    const authorization = await this.pool.authorization(worker, principal);
    if (authorization) headers.authorization = authorization;
    try {
      const r = await this.dispatch.balancer.track(worker, () =>
        worker.http.request({
          method: 'POST',
          path: '/object-transfer/receive',
          headers,
          body: Readable.from(capBody(held.replay(req), cap)),
        }),
      );
      const body = Buffer.from(await r.body.arrayBuffer());
      res.status(r.statusCode).setHeader('content-type', String(r.headers['content-type'] ?? 'application/json'));
      res.end(body);
    } catch (err) {
      if (res.headersSent) return;
      // A body without a Content-Length (chunked: a streamed object) is counted as it is relayed.
      if (err instanceof TransferTooLargeError) tooLarge();
      else this.unreachable(res, worker, err);
    }
  }

  private unreachable(res: Response, worker: Upstream, err: unknown): void {
    res.status(502).json({
      success: false,
      error: `Cannot reach worker '${worker.name}' (${(err as Error).message}); retry later.`,
    });
  }
}
