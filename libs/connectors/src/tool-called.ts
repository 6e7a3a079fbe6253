import { ActivityEventType, type ActivityPublisher } from '@stoa/activity';
import type { Principal } from '@stoa/core';
import type { Upstream } from './upstream';

/** One request a connector sends to an upstream. */
export interface Hop {
  upstream: Upstream;
  principal: Principal;
  tool: string;
}

/** Job and batch polls publish nothing (reference §9.1), so an agent's polling loop floods no lane. */
const POLLS = /_check_(job|batch)$/;

/**
 * Publishes a proxied call as a `tool_called` activity event (queued: never waits, never throws). The connector
 * is `server` (the publisher's default), the upstream `target_server`; `session_id` is the execution session
 * the call named or its result returned (`sessionOf`, read only when the event is published).
 */
export function publishToolCall(
  activity: ActivityPublisher | undefined,
  hop: Hop,
  success: boolean,
  seconds: number,
  sessionOf: () => string | undefined,
  error?: string,
): void {
  if (!activity?.enabled || POLLS.test(hop.tool)) return; // nothing to publish: the result is not even read
  const sessionId = sessionOf();
  activity.publish({
    type: ActivityEventType.toolCalled,
    description: `${hop.tool} → ${hop.upstream.name}`,
    user: hop.principal.id,
    session_id: sessionId ?? null,
    success,
    duration_ms: seconds * 1000,
    tool_name: hop.tool,
    target_server: hop.upstream.name,
    error: error ?? null,
  });
}

/** A non-empty string, else undefined (headers, untyped arguments). */
export function stringOf(v: unknown): string | undefined {
  return typeof v === 'string' && v ? v : undefined;
}
