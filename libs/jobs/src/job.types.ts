/** Job lifecycle states; `queued` only before a batch item starts. */
export const JobStatus = {
  queued: 'queued',
  running: 'running',
  completed: 'completed',
  failed: 'failed',
  cancelled: 'cancelled',
} as const;
export type JobStatus = (typeof JobStatus)[keyof typeof JobStatus];

export const JobKind = { background: 'background', batchItem: 'batch_item' } as const;
export type JobKind = (typeof JobKind)[keyof typeof JobKind];

/** A background job or a batch item, as stored. */
export interface JobRecord {
  id: string;
  owner: string;
  kind: JobKind;
  sessionId: string;
  batchId: string | null;
  inputIndex: number | null;
  status: JobStatus;
  description: string;
  replica: string | null;
  createdAt: number;
  startedAt: number | null;
  completedAt: number | null;
  stdout: string;
  stderr: string;
  error: string | null;
  /** The execution result JSON (terminal only). */
  result: Record<string, unknown> | null;
  /** The captured result variable of a batch item (terminal only). */
  payload: unknown;
  promoted: boolean;
}

/** A parallel batch, as stored. */
export interface BatchRecord {
  id: string;
  owner: string;
  parentSessionId: string;
  resultVariable: string;
  total: number;
  createdAt: number;
  cancelledAt: number | null;
}

export function isTerminal(status: JobStatus): boolean {
  return status === JobStatus.completed || status === JobStatus.failed || status === JobStatus.cancelled;
}

/** A batch's items by outcome, as check_batch counts them: `failed` includes cancelled, `running` includes queued. */
export interface BatchCounts {
  total: number;
  completed: number;
  failed: number;
  running: number;
}

/** Counts a batch's items from their statuses (one row per status, or one per item with count 1). */
export function batchCounts(rows: Iterable<{ status: JobStatus; count: number }>): BatchCounts {
  const out: BatchCounts = { total: 0, completed: 0, failed: 0, running: 0 };
  for (const { status, count } of rows) {
    out.total += count;
    if (status === JobStatus.completed) out.completed += count;
    else if (status === JobStatus.failed || status === JobStatus.cancelled) out.failed += count;
    else out.running += count;
  }
  return out;
}
