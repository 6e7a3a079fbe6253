import type { IncomingMessage, ServerResponse } from 'node:http';
import express from 'express';
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

/** A request as the basics leave it: the parsed JSON body and its raw bytes (forwarded without re-serialising). */
export type RawRequest = IncomingMessage & { body?: unknown; rawBody?: Buffer };
/** A connect-style handler on Node's own request and response (no framework needed). */
export type RawHandler = (req: RawRequest, res: ServerResponse, next: () => void) => void;

/** Host/Origin checks against DNS rebinding (403 with the reason); undefined when every host is allowed. */
export function hostGuard(allowedHosts: readonly string[] | undefined): RawHandler | undefined {
  if (!allowedHosts) return undefined;
  const allowed = new Set(allowedHosts.map((h) => h.toLowerCase()));
  return (req, res, next) => {
    const host = hostname(req.headers.host ?? '');
    if (!allowed.has(host)) {
      return sendJson(res, 403, {
        error: 'forbidden_host',
        error_description: `Host '${req.headers.host ?? ''}' is not allowed (DNS-rebinding protection). Add it to server.allowed_hosts if this server is meant to be reached by that name.`,
      });
    }
    const origin = req.headers.origin;
    if (origin && origin !== 'null' && !allowed.has(originHost(origin))) {
      return sendJson(res, 403, {
        error: 'forbidden_origin',
        error_description: `Origin '${origin}' is not allowed. Browsers may only call this server from its own allowed hosts (server.allowed_hosts).`,
      });
    }
    next();
  };
}

/**
 * JSON bodies read raw (with a clear 413) and parsed with a nesting bound (large ones off the event loop); the raw
 * bytes stay on the request, so a connector forwards them upstream without re-serialising. A body read already (by
 * the front door, see createHttpApp) is not read again.
 */
export function jsonBodyReader(opts: HttpBasicsOptions): RawHandler {
  const maxDepth = opts.maxJsonDepth ?? MAX_JSON_DEPTH;
  const read = express.raw({ type: 'application/json', limit: opts.maxBodyBytes }) as unknown as (
    req: RawRequest,
    res: ServerResponse,
    done: (err?: unknown) => void,
  ) => void;
  const raw = new Set(opts.rawPaths ?? []);
  return (req, res, next) => {
    if (req.rawBody || raw.has(pathOf(req))) return next();
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
  };
}

type BodyError = { status?: number; type?: string; message?: string };

/** 413 for an oversized body, 400 for unreadable or too deeply nested JSON; JSON-RPC shaped at /mcp. */
function refuseBody(req: RawRequest, res: ServerResponse, e: unknown, maxBodyBytes: number): void {
  const { status, type, message } = (e ?? {}) as BodyError;
  const mcp = pathOf(req) === '/mcp';
  if (status === 413) {
    const description = `Request body too large: the limit is ${Math.round(maxBodyBytes / 1048576)} MiB. Send less data per call (store large inputs in files or variables), or raise server.max_body_mb.`;
    return sendJson(
      res,
      413,
      mcp ? rpcError(-32600, description) : { error: 'payload_too_large', error_description: description },
    );
  }
  const reason =
    type === 'entity.too.deep'
      ? `${message} (the limit is a safeguard; flatten the data or pass it as a string)`
      : (message ?? 'unreadable JSON');
  const description = `Invalid request body: ${reason}. Send a JSON-RPC message as application/json.`;
  sendJson(
    res,
    status && status < 500 ? status : 400,
    mcp ? rpcError(-32700, `Parse error: ${description}`) : { error: 'invalid_body', error_description: description },
  );
}

/** A JSON answer on Node's own response (what Express's res.status().json() sends). */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.setHeader('content-length', Buffer.byteLength(text));
  res.end(text);
}

/** The request's path without its query string. */
export function pathOf(req: IncomingMessage): string {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
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
