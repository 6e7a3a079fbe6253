import { Controller, Get, Param, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { lookup } from 'mime-types';
import { pipeline } from 'node:stream/promises';
import { basename, join } from 'node:path';
import { CurrentPrincipal, Public } from '@stoa/auth';
import type { Principal } from '@stoa/core';
import { SessionService } from '@stoa/sessions';
import { BodyError, checkRelativeName, openKernelFile, ReceiveService, TransferRuntime } from '@stoa/transfer';

const NOT_FOUND = { error: 'artifact not found' };

/** Download links (capability URLs, no bearer) and the object-transfer receive endpoint (bearer). */
@ApiExcludeController()
@Controller()
export class TransferController {
  constructor(
    private readonly sessions: SessionService,
    private readonly transfer: TransferRuntime,
    private readonly receiver: ReceiveService,
  ) {}

  /** `GET /artifacts/{session}/{token}/{name…}`: a wrong, expired or foreign link answers 404 like an unknown one. */
  @Public()
  @Get('artifacts/:session/:token/*name')
  async download(@Param('session') session: string, @Param('token') token: string, @Param('name') nameParts: string | string[], @Res() res: Response): Promise<void> {
    const runtime = this.sessions.peek(session);
    let name: string;
    try {
      name = checkRelativeName(Array.isArray(nameParts) ? nameParts.join('/') : nameParts);
    } catch {
      res.status(404).json(NOT_FOUND);
      return;
    }
    if (!runtime || !this.transfer.links.verify(session, runtime.record.owner, name, token)) {
      res.status(404).json(NOT_FOUND);
      return;
    }
    const file = await openKernelFile(runtime.dirs, join(runtime.outputDir, name)).catch(() => undefined);
    if (!file) {
      res.status(404).json(NOT_FOUND);
      return;
    }
    res.status(200);
    res.setHeader('content-type', lookup(name) || 'application/octet-stream');
    res.setHeader('content-length', String(file.size));
    res.setHeader('cache-control', 'private, no-store');
    res.setHeader('x-content-type-options', 'nosniff');
    res.attachment(basename(name));
    await pipeline(file.handle.createReadStream({ start: 0, end: Math.max(0, file.size - 1) }), res).catch(() => res.destroy());
  }

  /** `POST /object-transfer/receive` (reference §6.5); the body is read here with the transfer cap, not the JSON limit. */
  @Post('object-transfer/receive')
  async receive(@CurrentPrincipal() principal: Principal, @Req() req: Request, @Res() res: Response): Promise<void> {
    const max = this.receiver.maxBodyBytes;
    // An answer before the whole body arrived closes the connection once the answer is out.
    const answer = (status: number, body: Record<string, unknown>) => {
      if (!req.readableEnded) {
        res.setHeader('connection', 'close');
        res.on('finish', () => req.destroy());
      }
      res.status(status).json(body);
    };
    const tooBig = () => answer(413, { success: false, error: 'Payload exceeds maximum transfer size' });
    if (Number(req.headers['content-length'] ?? NaN) > max) return tooBig();
    // Each receipt decodes to disk and then occupies a kernel: only a few at once per process.
    const slot = this.receiver.acquire();
    if (!slot) {
      res.setHeader('retry-after', '5');
      return answer(503, { success: false, error: 'This server is receiving too many objects at once. Retry in a few seconds.' });
    }
    try {
      // The body is decoded as it arrives (never held whole); more than the cap ends the request with 413.
      const limited = async function* (): AsyncGenerator<Buffer> {
        let size = 0;
        for await (const chunk of req as AsyncIterable<Buffer>) {
          size += chunk.length;
          if (size > max) throw new BodyError(413, 'Payload exceeds maximum transfer size');
          yield chunk;
        }
      };
      const result = await this.receiver.receive(principal, limited());
      answer(result.status, result.body);
    } finally {
      slot();
    }
  }
}
