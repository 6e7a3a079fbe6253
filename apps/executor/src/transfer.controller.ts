import { Controller, Get, Param, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { pipeline } from 'node:stream/promises';
import { basename, join } from 'node:path';
import { CurrentPrincipal, HTTP_STATUS, Public } from '@stoa/auth';
import { ErrorKind, isAppError, type Principal } from '@stoa/core';
import { SessionService } from '@stoa/sessions';
import {
  checkRelativeName,
  isBinaryObject,
  mimeOf,
  OBJECT_FIELDS_HEADER,
  openKernelFile,
  RECEIVE_FORMATS,
  ReceiveService,
  TransferRuntime,
  TransferTooLargeError,
} from '@stoa/transfer';

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
  async download(
    @Param('session') session: string,
    @Param('token') token: string,
    @Param('name') nameParts: string | string[],
    @Res() res: Response,
  ): Promise<void> {
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
    res.setHeader('content-type', mimeOf(name));
    res.setHeader('content-length', String(file.size));
    res.setHeader('cache-control', 'private, no-store');
    res.setHeader('x-content-type-options', 'nosniff');
    res.attachment(basename(name));
    await pipeline(file.handle.createReadStream({ start: 0, end: Math.max(0, file.size - 1) }), res).catch(() =>
      res.destroy(),
    );
  }

  /**
   * `POST /object-transfer/receive` (reference §6.5); the body is read by the service with the transfer cap, not
   * the JSON limit. Its refusals answer `{success: false, error, …details}` with their kind's status.
   */
  /** The body formats `POST` reads: a Stoa sender sends binary when this lists it (the reference has no GET). */
  @Public()
  @Get('object-transfer/receive')
  formats(): typeof RECEIVE_FORMATS {
    return RECEIVE_FORMATS;
  }

  @Post('object-transfer/receive')
  async receive(@CurrentPrincipal() principal: Principal, @Req() req: Request, @Res() res: Response): Promise<void> {
    // An answer before the whole body arrived closes the connection once the answer is out.
    const answer = (status: number, body: object) => {
      if (!req.readableEnded) {
        res.setHeader('connection', 'close');
        res.on('finish', () => req.destroy());
      }
      res.status(status).json(body);
    };
    try {
      const binary = isBinaryObject(req.headers['content-type'])
        ? { fieldsHeader: req.headers[OBJECT_FIELDS_HEADER] }
        : undefined;
      // A binary body is the object itself; a JSON one its base64 and the fields around it.
      const max = binary ? this.receiver.maxObjectBytes : this.receiver.maxBodyBytes;
      if (Number(req.headers['content-length'] ?? NaN) > max)
        throw new TransferTooLargeError('Payload exceeds maximum transfer size');
      answer(200, await this.receiver.receive(principal, req, binary));
    } catch (err) {
      if (!isAppError(err)) throw err;
      if (err.kind === ErrorKind.unavailable) res.setHeader('retry-after', '5');
      answer(HTTP_STATUS[err.kind], { success: false, error: err.message, ...err.details });
    }
  }
}
