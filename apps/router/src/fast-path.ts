import type { IncomingMessage, ServerResponse } from 'node:http';
import { Logger } from '@nestjs/common';
import type { PrincipalResolver } from '@stoa/auth';
import { isAppError, type Principal } from '@stoa/core';
import type { Upstream, UpstreamPool } from '@stoa/connectors';

type RawRequest = IncomingMessage & { body?: unknown; rawBody?: Buffer; principal?: Principal };
interface RpcBody {
  id?: string | number | null;
  params?: { name?: string; taskId?: string } & Record<string, unknown>;
}

const logger = new Logger('RouterFastPath');

/**
 * Express middleware in front of Nest's router for `/mcp`: a 2026-07-28 `tools/call` of an upstream tool is
 * streamed straight to that upstream (no SDK parse, validate and re-serialise on this hop; progress and
 * cancellation travel with the stream), and `tasks/get`/`tasks/cancel` go to the upstream that knows the
 * task. Anything else — and any request whose caller cannot be authenticated here — continues to the guarded
 * Nest route (the SDK endpoint, proper 401 challenges).
 */
export function routerFastPath(pool: UpstreamPool, principals: PrincipalResolver) {
  return (req: RawRequest, res: ServerResponse, next: () => void): void => {
    if (req.method !== 'POST' || (req.url !== '/mcp' && !req.url?.startsWith('/mcp?')) || req.headers['mcp-session-id'] || !req.headers['mcp-protocol-version']) return next();
    const method = req.headers['mcp-method'];
    const body = req.body as RpcBody | undefined;
    let route: Upstream | undefined;
    if (method === 'tools/call') {
      const name = req.headers['mcp-name'];
      route = typeof name === 'string' && body?.params?.name === name ? pool.route(name)?.upstream : undefined;
      if (!route || route.era !== 'modern') return next(); // 2025-era upstreams get the caller's own MCP session
    } else if (!((method === 'tasks/get' || method === 'tasks/cancel') && body?.params?.taskId)) {
      return next();
    }
    void principals.tryResolve(req.headers.authorization).then((principal) => {
      if (!principal) return next();
      req.principal = principal; // for the access log
      const done = route ? forward(pool, route, req, res, principal, body!) : relayTask(pool, method, res, principal, body!);
      return done.catch((err: Error) => {
        logger.error({ err: err.message }, 'fast path failed');
        if (!res.headersSent) toolError(res, body?.id, `Router error: ${err.message}. Retry; if it persists, report it to the operator.`);
      });
    }, next);
  };
}

async function forward(pool: UpstreamPool, upstream: Upstream, req: RawRequest, res: ServerResponse, principal: Principal, body: RpcBody): Promise<void> {
  const ac = new AbortController();
  res.once('close', () => res.writableFinished || ac.abort()); // the caller went away: cancel upstream
  try {
    await pool.forward(upstream, principal, req.rawBody ?? JSON.stringify(req.body), req.headers, res, ac.signal);
  } catch (err) {
    if (ac.signal.aborted) return;
    // Credential problems explain themselves (no token for OBO, an app-only caller…); anything else is the network.
    const message = isAppError(err) ? err.message : `Cannot reach upstream '${upstream.name}': ${(err as Error).message}. Retry; the router reconnects on its own (see /health).`;
    if (!isAppError(err)) logger.warn({ upstream: upstream.name, err: (err as Error).message }, 'forward failed');
    if (!res.headersSent) toolError(res, body.id, message);
    else res.end();
  }
}

/** Tasks belong to one upstream; ask each healthy one until one knows the task (task ids are unguessable). */
async function relayTask(pool: UpstreamPool, method: string, res: ServerResponse, principal: Principal, body: RpcBody): Promise<void> {
  let last: { code: number; message: string } = { code: -32602, message: `Task ${body.params?.taskId} not found.` };
  for (const upstream of pool.upstreams().filter((u) => u.healthy && u.era === 'modern')) {
    try {
      const authorization = await pool.authorization(upstream, principal);
      const r = await upstream.http.rpc(method, { taskId: body.params?.taskId }, { authorization, name: body.params?.taskId });
      if (r.result) return json(res, { jsonrpc: '2.0', id: body.id ?? null, result: r.result });
      if (r.error) last = r.error;
    } catch (err) {
      last = { code: -32603, message: `Upstream '${upstream.name}': ${(err as Error).message}` };
    }
  }
  json(res, { jsonrpc: '2.0', id: body.id ?? null, error: last });
}

function json(res: ServerResponse, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
  res.end(text);
}

function toolError(res: ServerResponse, id: RpcBody['id'], message: string): void {
  json(res, { jsonrpc: '2.0', id: id ?? null, result: { resultType: 'complete', content: [{ type: 'text', text: JSON.stringify({ success: false, error: message }, null, 2) }], isError: true } });
}
