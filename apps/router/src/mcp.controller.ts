import type { ServerResponse } from 'node:http';
import { All, Controller, Logger, Req, Res } from '@nestjs/common';
import { CurrentPrincipal } from '@stoa/auth';
import type { Principal } from '@stoa/core';
import { UpstreamPool, type Upstream } from '@stoa/connectors';
import type { McpRequest } from '@stoa/mcp';
import { RouterMcpService } from './router-mcp.service';

type RawRequest = McpRequest & { rawBody?: Buffer };
interface RpcBody {
  id?: string | number | null;
  params?: { name?: string; taskId?: string } & Record<string, unknown>;
}

/**
 * `/mcp`. A 2026-07-28 `tools/call` for an upstream tool is streamed straight through (the fast path: no SDK
 * parse, validate and re-serialise on this hop; progress and cancellation travel with the stream). Everything
 * else — discovery, tools/list, the router's own tools, 2025-era sessions — goes through the SDK endpoint.
 */
@Controller()
export class McpController {
  private readonly logger = new Logger(McpController.name);

  constructor(
    private readonly mcp: RouterMcpService,
    private readonly pool: UpstreamPool,
  ) {}

  @All('mcp')
  async handle(@Req() req: RawRequest, @Res() res: ServerResponse, @CurrentPrincipal() principal: Principal): Promise<void> {
    if (req.method === 'POST' && !req.headers['mcp-session-id'] && req.headers['mcp-protocol-version']) {
      const method = req.headers['mcp-method'];
      const body = req.body as RpcBody | undefined;
      if (method === 'tools/call') {
        const name = req.headers['mcp-name'];
        const route = typeof name === 'string' && body?.params?.name === name ? this.pool.route(name) : undefined;
        if (route && body) return this.forward(route.upstream, req, res, principal, body);
      } else if ((method === 'tasks/get' || method === 'tasks/cancel') && body?.params?.taskId) {
        return this.relayTask(method, req, res, principal, body);
      }
    }
    await this.mcp.endpoint.handle(req, res, principal);
  }

  private async forward(upstream: Upstream, req: RawRequest, res: ServerResponse, principal: Principal, body: RpcBody): Promise<void> {
    const ac = new AbortController();
    res.once('close', () => res.writableFinished || ac.abort()); // the caller went away: cancel upstream
    try {
      await this.pool.forward(upstream, principal, req.rawBody ?? JSON.stringify(req.body), req.headers, res, ac.signal);
    } catch (err) {
      if (ac.signal.aborted) return;
      const message = `Cannot reach upstream '${upstream.name}': ${(err as Error).message}. Retry; the router reconnects on its own (see /health).`;
      this.logger.warn({ upstream: upstream.name, err: (err as Error).message }, 'forward failed');
      if (!res.headersSent) toolError(res, body.id, message);
      else res.end();
    }
  }

  /** Tasks belong to one upstream; ask each healthy one until one knows the task (ids are unguessable). */
  private async relayTask(method: string, req: RawRequest, res: ServerResponse, principal: Principal, body: RpcBody): Promise<void> {
    let last: { code: number; message: string } = { code: -32602, message: `Task ${body.params?.taskId} not found.` };
    for (const upstream of this.pool.upstreams().filter((u) => u.healthy)) {
      try {
        const authorization = await this.pool.authorization(upstream, principal);
        const r = await upstream.http.rpc(method, { taskId: body.params?.taskId }, { authorization, name: body.params?.taskId });
        if (r.result) return json(res, { jsonrpc: '2.0', id: body.id ?? null, result: r.result });
        if (r.error) last = r.error;
      } catch (err) {
        last = { code: -32603, message: `Upstream '${upstream.name}': ${(err as Error).message}` };
      }
    }
    json(res, { jsonrpc: '2.0', id: body.id ?? null, error: last });
  }
}

function json(res: ServerResponse, body: unknown): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function toolError(res: ServerResponse, id: RpcBody['id'], message: string): void {
  json(res, { jsonrpc: '2.0', id: id ?? null, result: { resultType: 'complete', content: [{ type: 'text', text: JSON.stringify({ success: false, error: message }, null, 2) }], isError: true } });
}
