import { Logger } from '@nestjs/common';
import { type FrontDoor, type PrincipalResolver, type RawHandler, sendError } from '@stoa/auth';
import type { McpEndpoint } from './mcp-endpoint';
import type { McpRequest } from './endpoint-parts';
import { isMcpPath } from './request-guard';

const logger = new Logger('McpFrontDoor');

/**
 * An app's `/mcp` in front of Express and Nest (createHttpApp's `front`), both protocol eras and every method.
 * `before` (a connector's fast paths) sees each request first; then a caller known here goes straight to
 * `endpoint` — what the guarded route does, without Express's middleware stack and Nest's guard chain (~0.8 ms of
 * a 2 ms tool call on a 2-core VM). A caller who cannot be authenticated here (no token, a bad one, a custom
 * resolver that declines, an unreachable identity provider) takes the guarded route, which answers with its
 * proper 401 challenge or 503.
 */
export function mcpFrontDoor(endpoint: McpEndpoint, principals: PrincipalResolver, ...before: RawHandler[]): FrontDoor {
  const serve: RawHandler = (req, res, next) => {
    principals.tryResolve(req.headers.authorization, req).then((principal) => {
      if (!principal) return next();
      (req as McpRequest & { principal?: unknown }).principal = principal;
      return endpoint.handle(req as McpRequest, res, principal).catch((err: unknown) => {
        if (res.headersSent) res.destroy();
        else sendError(res, err, res.getHeader('x-request-id'), logger);
      });
    }, next);
  };
  return { takes: isMcpPath, handlers: [...before, serve] };
}
