import type { IncomingMessage, ServerResponse } from 'node:http';
import { Logger } from '@nestjs/common';
import type { PrincipalResolver } from '@stoa/auth';
import type { Principal } from '@stoa/core';
import { namedSession, observedToolCall, type RpcBody, type UpstreamPool } from '@stoa/connectors';
import { envelopeRefusal } from '@stoa/mcp';
import { type DispatchService, toolError } from './dispatch.service';

type RawRequest = IncomingMessage & { body?: unknown; rawBody?: Buffer; principal?: Principal };
const logger = new Logger('DispatcherFastPath');

/**
 * 2026-07-28 `tools/call` requests of worker tools: routed here, ahead of the dispatcher's own endpoint (`before` in
 * mcpFrontDoor). The common case — one worker, no rewrite — is streamed through unchanged (counted in flight);
 * fan-out, probes and reroutes take the parsed path. Everything else continues to the SDK endpoint.
 */
export function dispatcherFastPath(dispatch: DispatchService, pool: UpstreamPool, principals: PrincipalResolver) {
  return (req: RawRequest, res: ServerResponse, next: () => void): void => {
    if (
      req.method !== 'POST' ||
      req.url !== '/mcp' ||
      req.headers['mcp-session-id'] ||
      !req.headers['mcp-protocol-version'] ||
      req.headers['mcp-method'] !== 'tools/call'
    )
      return next();
    const body = req.body as RpcBody | undefined;
    const name = req.headers['mcp-name'];
    if (typeof name !== 'string' || body?.params?.name !== name || envelopeRefusal(body) || !pool.route(name))
      return next();
    void principals.tryResolve(req.headers.authorization, req).then(async (principal) => {
      if (!principal) return next();
      req.principal = principal;
      const args = body.params?.arguments ?? {};
      const sessionHeader = req.headers['mcp-param-execution-session-id'];
      const ctx = { sessionHeader: typeof sessionHeader === 'string' ? sessionHeader : undefined };
      await observedToolCall(pool, req, body, async () => {
        try {
          const route = await dispatch.route(principal, name, args, ctx);
          if (route.kind === 'one' && !route.warning && route.args === args) {
            const ac = new AbortController();
            res.once('close', () => res.writableFinished || ac.abort());
            try {
              const r = await dispatch.balancer.track(route.worker, () =>
                pool.forward(
                  route.worker,
                  principal,
                  req.rawBody ?? JSON.stringify(req.body),
                  req.headers,
                  res,
                  ac.signal,
                  { sessionId: namedSession(body) },
                ),
              );
              await dispatch.remember(route.worker, name, r.refs, ctx);
              return { isError: r.isError };
            } catch (err) {
              if (!ac.signal.aborted && !res.headersSent)
                rpc(res, body.id, toolError(`Cannot reach worker '${route.worker.name}': ${(err as Error).message}`));
              return { isError: true };
            }
          }
          const result = await dispatch.call(principal, name, args, ctx);
          rpc(res, body.id, result);
          return { isError: result.isError === true };
        } catch (err) {
          logger.warn({ tool: name, err: (err as Error).message }, 'dispatch failed');
          if (!res.headersSent) rpc(res, body.id, toolError(`Worker error: ${(err as Error).message}`));
          return { isError: true };
        }
      });
    }, next);
  };
}

function rpc(res: ServerResponse, id: RpcBody['id'], result: Record<string, unknown>): void {
  const text = JSON.stringify({ jsonrpc: '2.0', id: id ?? null, result: { resultType: 'complete', ...result } });
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
  res.end(text);
}
