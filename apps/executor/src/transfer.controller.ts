import { Controller, Get, Param, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { lookup } from 'mime-types';
import { pipeline } from 'node:stream/promises';
import { basename, join } from 'node:path';
import { CurrentPrincipal, Public } from '@stoa/auth';
import type { Principal } from '@stoa/core';
import { SessionService } from '@stoa/sessions';
import { checkRelativeName, openKernelFile, ReceiveService, TransferRuntime } from '@stoa/transfer';

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
    const tooBig = () => {
      res.status(413).setHeader('connection', 'close');
      res.json({ success: false, error: 'Payload exceeds maximum transfer size' });
      req.destroy();
    };
    if (Number(req.headers['content-length'] ?? NaN) > max) return tooBig();
    // Bodies are held in memory while they are decoded: only a few at once per process.
    const slot = this.receiver.acquire();
    if (!slot) {
      res.status(503).setHeader('retry-after', '5');
      res.json({ success: false, error: 'This server is receiving too many objects at once. Retry in a few seconds.' });
      req.destroy();
      return;
    }
    try {
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of req as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > max) return tooBig();
        chunks.push(chunk);
      }
      const answer = await this.receiver.receive(principal, Buffer.concat(chunks, size));
      res.status(answer.status).json(answer.body);
    } finally {
      slot();
    }
  }
}
