import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, Inject, Logger } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import type { Request, Response } from 'express';
import { ErrorKind, isAppError } from '@stoa/core';
import { UnauthenticatedError } from './auth.errors';
import { sendJson } from './http-basics';
import { bearerChallenge, PROTECTED_RESOURCE_SETTINGS, type ProtectedResourceSettings } from './protected-resource';

/** The HTTP status of each error kind (every HTTP mapping uses it). */
export const HTTP_STATUS: Readonly<Record<ErrorKind, number>> = {
  invalid: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  too_many: 429,
  too_large: 413,
  unavailable: 503,
  internal: 500,
};

/** One HTTP error shape for every app: JSON `{error, error_description}`, no stack traces, challenges on 401 only. */
@Catch()
export class HttpErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger(HttpErrorFilter.name);

  constructor(@Inject(PROTECTED_RESOURCE_SETTINGS) private readonly settings: ProtectedResourceSettings) {}

  catch(err: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    const req = host.switchToHttp().getRequest<Request & { id?: string | number }>();
    if (res.headersSent) return;
    if (err instanceof UnauthenticatedError) {
      res.setHeader('WWW-Authenticate', bearerChallenge(this.settings, req.path, err.tokenSent, err.message));
      res.status(401).json({ error: err.tokenSent ? 'invalid_token' : 'unauthorized', error_description: err.message });
      return;
    }
    if (isAppError(err)) return sendError(res, err, req.id, this.logger);
    if (err instanceof HttpException) {
      const status = err.getStatus();
      res.status(status).json({
        error: status === 404 ? 'not_found' : 'http_error',
        error_description: status === 404 ? `No route for ${req.method} ${req.path}.` : err.message,
      });
      return;
    }
    sendError(res, err, req.id, this.logger);
  }
}

/**
 * An application error as its status and `{error, error_description}`; anything else as a logged 500 without
 * details. The filter and the front door (createHttpApp) answer alike.
 */
export function sendError(
  res: ServerResponse,
  err: unknown,
  requestId: string | number | string[] | undefined,
  logger: { error: (obj: object, msg: string) => void },
): void {
  if (isAppError(err)) {
    const status = HTTP_STATUS[err.kind];
    if (status === 503) res.setHeader('Retry-After', '5');
    return sendJson(res, status, { error: err.code.toLowerCase(), error_description: err.message, ...err.details });
  }
  logger.error({ err: err instanceof Error ? err.stack : String(err), requestId }, 'unhandled error');
  sendJson(res, 500, {
    error: 'internal_error',
    error_description: `Internal server error (request id ${String(requestId ?? 'unknown')}). It was logged; retry, and report it if it persists.`,
  });
}
