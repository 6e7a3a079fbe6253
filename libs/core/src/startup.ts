import pino from 'pino';
import { appError, ErrorKind, isAppError } from './app-error';
import { REDACTED_PATHS } from './logging.module';

/** Start-up refused before anything ran (bad flags, a bad config, an unsafe bind): exit 2 with the message alone. */
export class StartupRefusedError extends appError('STARTUP_REFUSED', ErrorKind.invalid) {}

/** Runs a start-up step whose AppErrors (a ConfigError listing every bad key, …) refuse the start. */
export function refuseStartOn<T>(step: () => T): T {
  try {
    return step();
  } catch (err) {
    if (isAppError(err) && !(err instanceof StartupRefusedError))
      throw new StartupRefusedError(err.message, {}, { cause: err });
    throw err;
  }
}

/**
 * The process logger of an app's `main` (JSON lines on stdout, tokens redacted). `sync` never loses a line at
 * exit; `buffered` writes once per ~4 KB (a connector's access log) and is flushed on every exit path.
 */
export function startupLogger(name: string, mode: 'sync' | 'buffered'): pino.Logger {
  const dest =
    mode === 'sync'
      ? pino.destination({ dest: 1, sync: true })
      : pino.destination({ dest: 1, sync: false, minLength: 4096 });
  if (mode === 'buffered') process.on('exit', () => dest.flushSync());
  return pino(
    { name, level: process.env.LOG_LEVEL ?? 'info', redact: { paths: REDACTED_PATHS, censor: '[redacted]' } },
    dest,
  );
}

/** Graceful stop on SIGTERM/SIGINT: `close`, then exit 0; a second signal, a failed close or 10 s exit 1. */
export function closeOnSignals(logger: pino.Logger, close: () => Promise<void>): void {
  let stopping = false;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (stopping) process.exit(1);
      stopping = true;
      logger.info({ signal }, 'shutting down');
      setTimeout(() => process.exit(1), 10_000).unref();
      close().then(
        () => process.exit(0),
        (err: unknown) => {
          logger.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
    });
  }
}

/** Runs an app's `main`: a refusal exits 2 with its message; any other failure exits 1 as "{label} failed to start: …". */
export function runMain(label: string, main: () => Promise<void>): void {
  main().catch((err: unknown) => {
    if (err instanceof StartupRefusedError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    const why = isAppError(err) ? err.message : err instanceof Error ? err.stack : String(err);
    process.stderr.write(`${label} failed to start: ${why}\n`);
    process.exit(1);
  });
}
