/** How a call ended. */
export const AuditOutcome = {
  ok: 'ok',
  toolError: 'tool_error',
  denied: 'denied',
  rateLimited: 'rate_limited',
  upstreamError: 'upstream_error',
} as const;
export type AuditOutcome = (typeof AuditOutcome)[keyof typeof AuditOutcome];

/** What a connector reports about one call. */
export interface AuditEvent {
  principal: string;
  tool: string;
  upstream: string;
  sessionId?: string | null;
  outcome: AuditOutcome;
  decision: string;
  durationMs: number;
  bytesIn: number;
  bytesOut: number;
  /** The code cell of an execute call (hashed; stored only with store_code). */
  code?: string;
}

/** A stored record as the admin API shows it. */
export interface AuditRecord {
  id: string;
  at: string;
  principal: string;
  tool: string;
  upstream: string;
  session_id: string | null;
  outcome: string;
  decision: string;
  duration_ms: number;
  bytes_in: number;
  bytes_out: number;
  code_sha256: string | null;
  code: string | null;
}

export interface AuditFilter {
  principal?: string;
  tool?: string;
  outcome?: string;
  session_id?: string;
  /** Epoch ms bounds. */
  since?: number;
  until?: number;
  limit: number;
  /** Opaque cursor from the previous page. */
  cursor?: string;
}
