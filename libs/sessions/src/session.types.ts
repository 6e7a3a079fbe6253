/** Lifecycle states of a session record. */
export const SessionStatus = { active: 'active', closed: 'closed', expired: 'expired' } as const;
export type SessionStatus = (typeof SessionStatus)[keyof typeof SessionStatus];

/** A session as other code sees it. */
export interface SessionRecord {
  id: string;
  owner: string;
  status: SessionStatus;
  replica: string;
  createdAt: number;
  lastUsedAt: number;
  endedAt: number | null;
  endReason: string | null;
  metadata: Record<string, unknown>;
}

/** Filters for listing sessions (admin and owner views). */
export interface SessionFilter {
  id?: string;
  owner?: string;
  status?: SessionStatus;
  replica?: string;
}
