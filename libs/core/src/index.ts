/** Errors shared by every lib and transport. */
export {
  AppError,
  appError,
  ErrorKind,
  InvalidInputError,
  NotFoundError,
  UnavailableError,
  isAppError,
} from './app-error';
/** Random ids, tokens and HMAC signatures. */
export { randomId, randomToken, sign, verifySignature } from './ids';
/** The caller of a request. */
export { DEV_PRINCIPAL_ID, tokenlessPrincipal, type Principal } from './principal';
/** An app's `main`: start-up refusals (exit 2), the process logger, graceful stop on signals. */
export { closeOnSignals, refuseStartOn, runMain, startupLogger, StartupRefusedError } from './startup';
/** Bounded waits. */
export { settlesWithin } from './timing';
/** FIFO async mutex. */
export { Mutex } from './mutex';
/** Writes batched behind the one in flight (one transaction for many callers). */
export { GroupCommit } from './group-commit';
/** Structured logging (pino) with access logs and redaction. */
export { accessLog, LoggingModule } from './logging.module';
/** Python repr of JSON values. */
export { isPyIdentifier, pyRepr } from './python';
/** Readiness checks for `/health/ready` (each dependency named, bounded in time). */
export { probe, runReadiness, type CheckResult, type ReadinessCheck } from './readiness';
/** Untrusted input in messages and logs (bounded echoes), JSON nesting bounds. */
export { clip, jsonNestsDeeper, kindOf } from './untrusted';
/** JSON request bodies: nesting bound, large bodies parsed off the event loop. */
export { JsonBodyError, OFF_LOOP_BYTES, parseJsonBody, type ParsedBody } from './json-parse';
/** A module run on its own (child process, worker thread) beside its caller, from a build or from source. */
export { siblingModule } from './sibling-module';
