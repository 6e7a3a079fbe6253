import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { type DynamicModule, Module, RequestMethod } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import type { Principal } from './principal';

/** Header and field paths never written to logs. */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  '*.token',
];

/** One access-log line per finished request: request id (x-request-id), principal, status, latency; no headers. */
export function accessLog(logger: { info: (obj: object, msg: string) => void }) {
  return (req: IncomingMessage & { principal?: Principal }, res: ServerResponse, next: () => void): void => {
    const started = performance.now();
    const given = req.headers['x-request-id'];
    const id = typeof given === 'string' && given.length <= 100 ? given : randomUUID();
    res.setHeader('x-request-id', id);
    if (req.url !== '/health' && req.url !== '/healthz') {
      res.once('finish', () => {
        logger.info(
          {
            req: { id, method: req.method, url: req.url },
            principal: req.principal?.id,
            status: res.statusCode,
            ms: Math.round((performance.now() - started) * 10) / 10,
          },
          'request completed',
        );
      });
    }
    next();
  };
}

/** Structured JSON logs (pino) for the app logger; apps add the access log with {@link accessLog}. */
@Module({})
export class LoggingModule {
  static forRoot(app: string): DynamicModule {
    return {
      module: LoggingModule,
      imports: [
        // App logs only; the access log is our own middleware (see accessLog).
        // pino-http's per-request child logger is skipped on /mcp, the hot path (requests there log via accessLog).
        LoggerModule.forRoot({
          pinoHttp: {
            name: app,
            level: process.env.LOG_LEVEL ?? 'info',
            redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
            autoLogging: false,
          },
          exclude: [{ method: RequestMethod.ALL, path: 'mcp' }],
        }),
      ],
    };
  }
}
