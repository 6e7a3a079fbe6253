import { tablesMigration } from '@stoa/persistence';

/** Creates `jobs` and `batches` (portable: SQLite and PostgreSQL). */
const CreateJobs1764470000000 = tablesMigration('CreateJobs1764470000000', {
  jobs: {
    columns: {
      id: 'varchar(40) primary',
      owner: 'varchar(300)',
      kind: 'varchar(20)',
      session_id: 'varchar(200)',
      batch_id: 'varchar(40) null',
      input_index: 'integer null',
      status: 'varchar(20)',
      description: "text default ''",
      replica: 'varchar(200) null',
      created_at: 'bigint',
      started_at: 'bigint null',
      completed_at: 'bigint null',
      stdout: "text default ''",
      stderr: "text default ''",
      error: 'text null',
      result: 'text null',
      payload: 'text null',
      promoted: 'boolean default false',
    },
    indices: {
      idx_jobs_owner_status: ['owner', 'status'],
      idx_jobs_batch: ['batch_id'],
    },
  },
  batches: {
    columns: {
      id: 'varchar(40) primary',
      owner: 'varchar(300)',
      parent_session_id: 'varchar(200)',
      result_variable: 'varchar(200)',
      total: 'integer',
      created_at: 'bigint',
      cancelled_at: 'bigint null',
    },
    indices: {
      idx_batches_owner: ['owner'],
    },
  },
});

/** Every migration of the jobs lib, in order. */
export const JOB_MIGRATIONS = [CreateJobs1764470000000];
