import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** A web-standard MCP handler (`createMcpHandler(...)`), as the SDK's adapters call it. */
export interface WebMcpHandler {
  fetch(request: Request, options?: { authInfo?: never; parsedBody?: unknown }): Promise<Response>;
}

/** The request's headers as web `Headers` (pseudo-headers and the body's framing left out). */
export function webHeaders(req: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || name.startsWith(':') || name === 'content-length' || name === 'transfer-encoding')
      continue;
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else headers.set(name, value);
  }
  return headers;
}

/**
 * Serves `handler` for a Node request whose JSON body the HTTP layer has already read and parsed (`body`).
 * The SDK's `toNodeHandler` would JSON.stringify that body again and UTF-8 encode it to build a `Request` the
 * handler never reads once it has `parsedBody` — a few ms per MB on the event loop. Here the `Request` carries
 * headers only; the response streams back through Node's own web-stream bridge, with backpressure.
 */
export function toParsedBodyHandler(handler: WebMcpHandler, onerror: (err: Error) => void) {
  return async (req: IncomingMessage & { body?: unknown; auth?: unknown }, res: ServerResponse): Promise<void> => {
    const abort = new AbortController();
    // Only a client that left before the answer aborts the call (an abort after a complete answer would only
    // make the SDK build errors for an exchange that is over).
    res.once('close', () => res.writableFinished || abort.abort());
    const request = new Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`, {
      method: req.method,
      headers: webHeaders(req),
      signal: abort.signal,
    });
    let response: Response;
    try {
      response = await handler.fetch(request, {
        ...(req.auth !== undefined && { authInfo: req.auth as never }),
        ...(req.body !== undefined && { parsedBody: req.body }),
      });
    } catch (err) {
      onerror(err instanceof Error ? err : new Error(String(err)));
      response = Response.json(
        {
          jsonrpc: '2.0',
          id: null,
          error: {
            code: -32603,
            message:
              'Internal error: the request could not be served. Retry; if it persists, report it with the time of the call.',
          },
        },
        { status: 500 },
      );
    }
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (!response.body) {
      res.end();
      return;
    }
    // A JSON answer is complete already: one write, no stream pipeline.
    if (response.headers.get('content-type')?.startsWith('application/json')) {
      res.end(Buffer.from(await response.arrayBuffer()));
      return;
    }
    // A client that goes away mid-stream ends the pipeline with a premature-close error: nothing to answer then.
    await pipeline(Readable.fromWeb(response.body), res).catch(() => undefined);
  };
}
