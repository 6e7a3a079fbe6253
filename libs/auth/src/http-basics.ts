import type { NestExpressApplication } from '@nestjs/platform-express';
import express, { type NextFunction, type Request, type Response } from 'express';
import helmet from 'helmet';

export interface HttpBasicsOptions {
  maxBodyBytes: number;
  /** Host names accepted (DNS-rebinding protection); undefined → any. */
  allowedHosts?: readonly string[];
  /** Paths whose handlers read their own (larger) bodies, e.g. object transfer; skipped by the JSON parser. */
  rawPaths?: readonly string[];
}

/** Hardening before any route runs: Host/Origin checks (DNS rebinding), security headers on /admin, JSON bodies with a clear 413. */
export function installHttpBasics(app: NestExpressApplication, opts: HttpBasicsOptions): void {
  app.disable('x-powered-by');
  const allowed = opts.allowedHosts ? new Set(opts.allowedHosts.map((h) => h.toLowerCase())) : undefined;
  app.use((req: Request, res: Response, next: NextFunction) => {
    if (!allowed) return next();
    const host = hostname(req.headers.host ?? '');
    if (!allowed.has(host)) {
      res.status(403).json({ error: 'forbidden_host', error_description: `Host '${req.headers.host ?? ''}' is not allowed (DNS-rebinding protection). Add it to server.allowed_hosts if this server is meant to be reached by that name.` });
      return;
    }
    const origin = req.headers.origin;
    if (origin && origin !== 'null' && !allowed.has(originHost(origin))) {
      res.status(403).json({ error: 'forbidden_origin', error_description: `Origin '${origin}' is not allowed. Browsers may only call this server from its own allowed hosts (server.allowed_hosts).` });
      return;
    }
    next();
  });
  app.use('/admin', helmet());
  // The raw bytes stay on the request: a connector forwards them upstream without re-serialising.
  const json = express.json({ limit: opts.maxBodyBytes, verify: (req, _res, buf) => void ((req as Request & { rawBody?: Buffer }).rawBody = buf) });
  const raw = new Set(opts.rawPaths ?? []);
  app.use((req: Request, res: Response, next: NextFunction) => {
    if (raw.has(req.path)) return next();
    json(req, res, (err?: unknown) => {
      if (!err) return next();
      const e = err as { status?: number; type?: string; message?: string };
      if (e.status === 413) {
        res.status(413).json({ error: 'payload_too_large', error_description: `Request body too large: the limit is ${Math.round(opts.maxBodyBytes / 1048576)} MiB. Send less data per call (store large inputs in files or variables), or raise server.max_body_mb.` });
      } else {
        res.status(e.status ?? 400).json({ error: 'invalid_body', error_description: `Invalid request body: ${e.message ?? 'unreadable JSON'}. Send a JSON-RPC message as application/json.` });
      }
    });
  });
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
