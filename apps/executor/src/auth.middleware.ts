import { Injectable, type NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { noopPrincipal } from '@stoa/auth';
import type { Principal } from '@stoa/core';

/** Gives every request a principal (no-op development auth until Entra is configured). */
@Injectable()
export class AuthMiddleware implements NestMiddleware {
  use(req: Request & { principal?: Principal }, _res: Response, next: NextFunction): void {
    req.principal = noopPrincipal(req.headers.authorization);
    next();
  }
}
