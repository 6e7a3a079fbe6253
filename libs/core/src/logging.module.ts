import type { IncomingMessage } from 'node:http';
import { randomUUID } from 'node:crypto';
import { type DynamicModule, Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import type { Principal } from './principal';

/** Header and field paths never written to logs. */
export const REDACTED_PATHS = ['req.headers.authorization', 'req.headers.cookie', 'req.headers["x-api-key"]', '*.token'];

/** Structured JSON logs (pino) with an access log per request: request id, principal, status, latency; tokens redacted. */
@Module({})
export class LoggingModule {
  static forRoot(app: string): DynamicModule {
    return {
      module: LoggingModule,
      imports: [
        LoggerModule.forRoot({
          pinoHttp: {
            name: app,
            level: process.env.LOG_LEVEL ?? 'info',
            redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
            genReqId: (req, res) => {
              const given = req.headers['x-request-id'];
              const id = typeof given === 'string' && given.length <= 100 ? given : randomUUID();
              res.setHeader('x-request-id', id);
              return id;
            },
            customProps: (req: IncomingMessage & { principal?: Principal }) => ({ principal: req.principal?.id }),
            autoLogging: { ignore: (req) => req.url === '/health' || req.url === '/healthz' },
            serializers: {
              req: (req: { id: unknown; method: string; url: string }) => ({ id: req.id, method: req.method, url: req.url }),
            },
          },
        }),
      ],
    };
  }
}
