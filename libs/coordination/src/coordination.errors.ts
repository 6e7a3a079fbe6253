import { appError, ErrorKind } from '@stoa/core';

/**
 * The reference's error codes (agora §12.2). Each carries `details.fix`, the next step an agent should take; the
 * MCP binding answers `{"error": code, "message", "details", "fix"}` as the reference does.
 */
export class NotAuthorizedError extends appError('NOT_AUTHORIZED', ErrorKind.forbidden) {}
export class ValidationError extends appError('VALIDATION_ERROR', ErrorKind.invalid) {}
export class ResourceLimitError extends appError('RESOURCE_LIMIT', ErrorKind.tooMany) {}
export class ChannelLimitError extends appError('CHANNEL_LIMIT', ErrorKind.tooMany) {}
export class ChannelNotFoundError extends appError('CHANNEL_NOT_FOUND', ErrorKind.notFound) {}
/** A name registered by another principal (names are unique in a square). */
export class NameTakenError extends appError('NAME_TAKEN', ErrorKind.conflict) {}
/** A board write whose expected_version is not the current one. */
export class VersionConflictError extends appError('VERSION_CONFLICT', ErrorKind.conflict) {}
/** A board value its key's JSON Schema refuses. */
export class SchemaViolationError extends appError('SCHEMA_VIOLATION', ErrorKind.invalid) {}
/** Releasing a lock the caller does not hold (someone else's lock answers the same). */
export class LockNotHeldError extends appError('LOCK_NOT_HELD', ErrorKind.conflict) {}
export class AgentNotFoundError extends appError('AGENT_NOT_FOUND', ErrorKind.notFound) {}

/** `details` with the next step. */
export function fix(next: string, details: Record<string, unknown> = {}): Record<string, unknown> {
  return { ...details, fix: next };
}
