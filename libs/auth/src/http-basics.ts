import type { NestExpressApplication } from '@nestjs/platform-express';
import express, { type NextFunction, type Request, type Response } from 'express';
import helmet from 'helmet';
import { parseJsonBody } from '@stoa/core';

/** Deepest JSON nesting accepted in a request body (the MCP SDK re-serialises bodies recursively). */
export const MAX_JSON_DEPTH = 100;

export interface HttpBasicsOptions {
  maxBodyBytes: number;
  /** Host names accepted (DNS-rebinding protection); undefined → any. */
  allowedHosts?: readonly string[];
  /** Paths whose handlers read their own (larger) bodies, e.g. object transfer; skipped by the JSON parser. */
  rawPaths?: readonly string[];
  /** Deepest array/object nesting accepted in a JSON body (default MAX_JSON_DEPTH). */
  maxJsonDepth?: number;
}

/** Hardening before any route runs: Host/Origin checks (DNS rebinding), security headers on /admin, JSON bodies with a clear 413. */
export function installHttpBasics(app: NestExpressApplication, opts: HttpBasicsOptions): void {
  app.disable('x-powered-by');
  const allowed = opts.allowedHosts ? new Set(opts.allowedHosts.map((h) => h.toLowerCase())) : undefined;
  app.use((req: Request, res: Response, next: NextFunction) => {
    if (!allowed) return next();
    const host = hostname(req.headers.host ?? '');
    if (!allowed.has(host)) {
      res.status(403).json({
        error: 'forbidden_host',
        error_description: `Host '${req.headers.host ?? ''}' is not allowed (DNS-rebinding protection). Add it to server.allowed_hosts if this server is meant to be reached by that name.`,
      });
      return;
    }
    const origin = req.headers.origin;
    if (origin && origin !== 'null' && !allowed.has(originHost(origin))) {
      res.status(403).json({
        error: 'forbidden_origin',
        error_description: `Origin '${origin}' is not allowed. Browsers may only call this server from its own allowed hosts (server.allowed_hosts).`,
      });
      return;
    }
    next();
  });
  app.use('/admin', helmet());
  // JSON bodies are read raw and parsed with a nesting bound (large ones off the event loop); the raw bytes stay
  // on the request: a connector forwards them upstream without re-serialising.
  const maxDepth = opts.maxJsonDepth ?? MAX_JSON_DEPTH;
  const read = express.raw({ type: 'application/json', limit: opts.maxBodyBytes });
  const raw = new Set(opts.rawPaths ?? []);
  app.use((req: Request & { rawBody?: Buffer }, res: Response, next: NextFunction) => {
    if (raw.has(req.path)) return next();
    read(req, res, (err?: unknown) => {
      if (err) return refuseBody(req, res, err, opts.maxBodyBytes);
      if (!Buffer.isBuffer(req.body)) return next(); // not JSON: left to the route (415 at /mcp)
      const buf = req.body;
      if (!buf.length) {
        req.rawBody = buf;
        req.body = {};
        return next();
      }
      parseJsonBody(buf, maxDepth).then(
        ({ value, bytes }) => {
          req.rawBody = bytes;
          req.body = value;
          next();
        },
        (e: Error) => refuseBody(req, res, e, opts.maxBodyBytes),
      );
    });
  });
}

type BodyError = { status?: number; type?: string; message?: string };

/** 413 for an oversized body, 400 for unreadable or too deeply nested JSON; JSON-RPC shaped at /mcp. */
function refuseBody(req: Request, res: Response, e: BodyError, maxBodyBytes: number): void {
  const mcp = req.path === '/mcp';
  if (e.status === 413) {
    const description = `Request body too large: the limit is ${Math.round(maxBodyBytes / 1048576)} MiB. Send less data per call (store large inputs in files or variables), or raise server.max_body_mb.`;
    res
      .status(413)
      .json(mcp ? rpcError(-32600, description) : { error: 'payload_too_large', error_description: description });
    return;
  }
  const reason =
    e.type === 'entity.too.deep'
      ? `${e.message} (the limit is a safeguard; flatten the data or pass it as a string)`
      : (e.message ?? 'unreadable JSON');
  const description = `Invalid request body: ${reason}. Send a JSON-RPC message as application/json.`;
  res
    .status(e.status && e.status < 500 ? e.status : 400)
    .json(
      mcp ? rpcError(-32700, `Parse error: ${description}`) : { error: 'invalid_body', error_description: description },
    );
}

function rpcError(code: number, message: string): Record<string, unknown> {
  return { jsonrpc: '2.0', id: null, error: { code, message } };
}

/** `Host` header without the port (IPv6 literals keep their brackets). */
function hostname(host: string): string {
  const h = host.toLowerCase();
  return h.startsWith('[') ? h.slice(0, h.indexOf(']') + 1) : h.replace(/:\d+$/, '');
}

function originHost(origin: string): string {
  try {
    const u = new URL(origin);
    return u.hostname.toLowerCase();
  } catch {
    return '';
  }
}
