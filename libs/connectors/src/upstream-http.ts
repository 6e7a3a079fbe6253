import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { createParser } from 'eventsource-parser';
import type { Readable } from 'node:stream';
import { type Dispatcher, Pool } from 'undici';
import { resultRefs, type ResultRefs } from '@stoa/mcp';
import { upstreamUrls } from './upstream-url';

/** The 2026-07-28 revision we speak to upstreams. */
export const MODERN = '2026-07-28';
const PROTOCOL_META = 'io.modelcontextprotocol/protocolVersion';

/** A JSON-RPC response or notification as it comes off the wire. */
export interface RpcMessage {
  jsonrpc: '2.0';
  id?: string | number | null;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
}

/** Request headers a proxy hop forwards unchanged (MCP routing headers, tracing). */
const FORWARDED =
  /^(mcp-protocol-version|mcp-method|mcp-name|mcp-param-.+|content-type|accept|traceparent|tracestate|baggage)$/;
/** Response headers sent back to the caller. */
const RETURNED = ['content-type', 'cache-control', 'x-accel-buffering'];

/**
 * Keep-alive HTTP to one upstream (undici pool): no handshake per call, connections reused across callers.
 * `forward` streams a caller's 2026-07-28 request and the upstream's answer (JSON or SSE, progress included)
 * through unchanged but for the Authorization header; `rpc` is the parsed path for the router's own calls.
 */
export class UpstreamHttp {
  readonly urls: ReturnType<typeof upstreamUrls>;
  private readonly pool: Pool;

  constructor(url: string, connections: number) {
    this.urls = upstreamUrls(url);
    this.pool = new Pool(this.urls.origin, {
      connections,
      pipelining: 1,
      keepAliveTimeout: 30_000,
      headersTimeout: 0,
      bodyTimeout: 0,
    });
  }

  /** GET a JSON document below the upstream's base URL (e.g. /catalog, /health). */
  async getJson(path: string, timeoutMs: number): Promise<{ status: number; body: unknown }> {
    const r = await this.pool.request({
      path: `${this.urls.basePath}${path}`,
      method: 'GET',
      headers: { accept: 'application/json' },
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await r.body.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      /* not JSON: keep the text for the error message */
    }
    return { status: r.statusCode, body };
  }

  /**
   * Sends a plain HTTP request below the upstream's base URL over the same keep-alive pool (download links,
   * object transfers relayed by a dispatcher); the caller reads or pipes the answer.
   */
  request(opts: {
    method: 'GET' | 'POST';
    path: string;
    headers: Record<string, string>;
    body?: Readable;
    signal?: AbortSignal;
  }): Promise<Dispatcher.ResponseData> {
    return this.pool.request({ ...opts, path: `${this.urls.basePath}${opts.path}` });
  }

  /**
   * Pipes one caller request to the upstream and its answer back. Aborting `signal` (the caller went away)
   * aborts the upstream request, which a 2026-07-28 server treats as cancellation.
   */
  async forward(
    body: Buffer | string,
    headers: IncomingHttpHeaders,
    authorization: string | undefined,
    res: ServerResponse,
    signal: AbortSignal,
    extra?: Record<string, string>,
  ): Promise<ForwardResult> {
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(headers)) if (typeof v === 'string' && FORWARDED.test(k)) out[k] = v;
    if (authorization) out.authorization = authorization;
    if (extra) Object.assign(out, extra);
    const r = await this.pool.request({ path: this.urls.mcpPath, method: 'POST', headers: out, body, signal });
    const back: Record<string, string> = {};
    for (const k of RETURNED) {
      const v = r.headers[k];
      if (typeof v === 'string') back[k] = v;
    }
    if (!String(back['content-type'] ?? '').includes('text/event-stream')) {
      // A JSON answer goes back in one write with its length (fewer syscalls than relaying chunks).
      const buf = Buffer.from(await r.body.arrayBuffer());
      res.writeHead(r.statusCode, { ...back, 'content-length': String(buf.length) });
      res.end(buf);
      return outcomeOf(r.statusCode, buf.toString('utf8'), buf.length);
    }
    res.writeHead(r.statusCode, { ...back, 'x-accel-buffering': 'no' });
    res.flushHeaders();
    let bytes = 0;
    let last: string | undefined; // the response is the stream's last event (progress comes before it)
    const parser = createParser({ onEvent: (e) => (last = e.data) });
    const decoder = new TextDecoder();
    for await (const chunk of r.body) {
      bytes += (chunk as Buffer).length;
      parser.feed(decoder.decode(chunk as Buffer, { stream: true }));
      if (!res.write(chunk as Buffer)) await new Promise<void>((resolve) => res.once('drain', () => resolve()));
    }
    res.end();
    return outcomeOf(r.statusCode, last, bytes);
  }

  /**
   * Sends one 2026-07-28 JSON-RPC request and returns its response; notifications for it (progress) go to
   * `onNotification`. Throws `UpstreamHttpError` on a non-JSON-RPC HTTP failure.
   */
  async rpc(
    method: string,
    params: Record<string, unknown>,
    opts: {
      authorization?: string;
      signal?: AbortSignal;
      name?: string;
      headers?: Record<string, string>;
      clientCapabilities?: Record<string, unknown>;
      onNotification?: (m: RpcMessage) => void;
    },
  ): Promise<RpcMessage> {
    const meta = {
      ...((params._meta as Record<string, unknown> | undefined) ?? {}),
      [PROTOCOL_META]: MODERN,
      'io.modelcontextprotocol/clientCapabilities': opts.clientCapabilities ?? {},
      'io.modelcontextprotocol/clientInfo': { name: 'stoa-connector', version: '0.1.0' },
    };
    const id = 1;
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN,
      'mcp-method': method,
    };
    if (opts.name) headers['mcp-name'] = opts.name;
    if (opts.authorization) headers.authorization = opts.authorization;
    if (opts.headers) Object.assign(headers, opts.headers);
    const r = await this.pool.request({
      path: this.urls.mcpPath,
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: meta } }),
      signal: opts.signal,
    });
    const type = String(r.headers['content-type'] ?? '');
    if (type.includes('text/event-stream')) {
      let final: RpcMessage | undefined;
      const parser = createParser({
        onEvent: (e) => {
          let m: RpcMessage;
          try {
            m = JSON.parse(e.data) as RpcMessage;
          } catch {
            return;
          }
          if (m.id === id && (m.result || m.error)) final = m;
          else if (m.method) opts.onNotification?.(m);
        },
      });
      for await (const chunk of r.body) parser.feed((chunk as Buffer).toString('utf8'));
      if (final) return final;
      throw new UpstreamHttpError(r.statusCode, 'the upstream closed its event stream without a response');
    }
    const text = await r.body.text();
    try {
      const m = JSON.parse(text) as RpcMessage;
      if (m.result || m.error) return m;
    } catch {
      /* fall through */
    }
    throw new UpstreamHttpError(r.statusCode, text.slice(0, 300));
  }

  async close(): Promise<void> {
    await this.pool.close();
  }
}

/** What a forwarded call came to (for audit and routing): bytes relayed, a tool error, the ids the result names. */
export interface ForwardResult {
  isError: boolean;
  bytesOut: number;
  /** Session, job and batch ids from the result's `_meta` (connectors remember which upstream owns a job). */
  refs: ResultRefs;
}

function outcomeOf(status: number, text: string | undefined, bytesOut: number): ForwardResult {
  const message = parseMessage(text);
  const result = message?.result;
  return {
    isError: status >= 400 || message?.error !== undefined || result?.isError === true,
    bytesOut,
    refs: resultRefs(result),
  };
}

function parseMessage(text: string | undefined): RpcMessage | undefined {
  if (!text) return undefined;
  try {
    const m = JSON.parse(text) as unknown;
    return m && typeof m === 'object' ? (m as RpcMessage) : undefined;
  } catch {
    return undefined; // not JSON-RPC (an HTTP error page): only the status tells
  }
}

/** An upstream answered with an HTTP failure instead of JSON-RPC. */
export class UpstreamHttpError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
  ) {
    super(`HTTP ${status}${detail ? `: ${detail}` : ''}`);
  }
}
