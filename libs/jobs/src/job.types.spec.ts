import { describe, expect, it } from 'vitest';
import { batchCounts, JobStatus } from './job.types';

describe('batchCounts', () => {
  it('counts cancelled items as failed and queued items as running, as check_batch does', () => {
    const rows = [
      { status: JobStatus.completed, count: 3 },
      { status: JobStatus.failed, count: 1 },
      { status: JobStatus.cancelled, count: 2 },
      { status: JobStatus.queued, count: 4 },
      { status: JobStatus.running, count: 5 },
    ];
    expect(batchCounts(rows)).toEqual({ total: 15, completed: 3, failed: 3, running: 9 });
  });

  it('gives zeros for a batch without items', () => {
    expect(batchCounts([])).toEqual({ total: 0, completed: 0, failed: 0, running: 0 });
  });
});
