/** `sessions:` config schema and env overrides. */
export { sessionConfigSchema, type SessionConfig } from './session.config';
/** Session errors (not found, expired, closed, limit). */
export { SessionClosedError, SessionExpiredError, SessionLimitError, SessionNotFoundError } from './session.errors';
/** Session migrations for the app's data source. */
export { SESSION_MIGRATIONS } from './session.migrations';
/** Signed session ids carrying their replica. */
export { SessionIdCodec } from './session-id';
/** Session lifecycle service and runtime. */
export { SessionService, type SessionRuntime, type SessionSettings } from './session.service';
/** Nest module. */
export { SessionModule } from './session.module';
/** Session types. */
export { SessionStatus, type SessionFilter, type SessionRecord } from './session.types';
