import { appError, clip, ErrorKind } from '@stoa/core';

/** Unknown id, or an id owned by someone else (the two answer identically). */
export class SessionNotFoundError extends appError('SESSION_NOT_FOUND', ErrorKind.notFound) {
  constructor(id: string, activeForCaller: number) {
    super(`Session ${clip(id)} not found. It may have expired or been cleaned up. Active sessions: ${activeForCaller}`);
  }
}

/** The caller's session expired (idle, or the executor restarted); its state is gone. */
export class SessionExpiredError extends appError('SESSION_EXPIRED', ErrorKind.notFound) {
  constructor(id: string, reason: string | null) {
    super(
      `Session ${clip(id)} has expired${reason ? ` (${reason})` : ''} and its kernel state is gone. ` +
        'Start a new session: call the execute tool again without execution_session_id, and re-create any variables you need.',
    );
  }
}

/** The caller's session was closed. */
export class SessionClosedError extends appError('SESSION_CLOSED', ErrorKind.notFound) {
  constructor(id: string) {
    super(
      `Session ${clip(id)} was closed. Start a new session: call the execute tool again without execution_session_id.`,
    );
  }
}

/** Session cap reached; the reference's 429 payload. */
export class SessionLimitError extends appError('MAX_SESSIONS_REACHED', ErrorKind.tooMany) {
  constructor(max: number) {
    super(`Maximum number of sessions (${max}) reached. Please close an existing session before creating a new one.`, {
      error_type: 'max_sessions_reached',
      status_code: 429,
    });
  }
}
