import type { NestExpressApplication } from '@nestjs/platform-express';
import express, { type NextFunction, type Request, type Response } from 'express';

export interface HttpBasicsOptions {
  maxBodyBytes: number;
  /** Host names accepted (DNS-rebinding protection); undefined → any. */
  allowedHosts?: readonly string[];
}

/** JSON bodies with a clear 413, and Host validation, before any route runs. */
export function installHttpBasics(app: NestExpressApplication, opts: HttpBasicsOptions): void {
  const allowed = opts.allowedHosts ? new Set(opts.allowedHosts.map((h) => h.toLowerCase())) : undefined;
  app.use((req: Request, res: Response, next: NextFunction) => {
    if (!allowed) return next();
    const host = (req.headers.host ?? '').toLowerCase().replace(/:\d+$/, '');
    if (allowed.has(host)) return next();
    res.status(403).json({ error: `Host '${req.headers.host ?? ''}' is not allowed (DNS-rebinding protection). Add it to server.allowed_hosts if this server is meant to be reached by that name.` });
  });
  const json = express.json({ limit: opts.maxBodyBytes });
  app.use((req: Request, res: Response, next: NextFunction) => {
    json(req, res, (err?: unknown) => {
      if (!err) return next();
      const e = err as { status?: number; type?: string; message?: string };
      if (e.status === 413) {
        res.status(413).json({ error: `Request body too large: the limit is ${Math.round(opts.maxBodyBytes / 1048576)} MiB. Send less data per call (store large inputs in files or variables), or raise server.max_body_mb.` });
      } else {
        res.status(e.status ?? 400).json({ error: `Invalid request body: ${e.message ?? 'unreadable JSON'}. Send a JSON-RPC message as application/json.` });
      }
    });
  });
}
