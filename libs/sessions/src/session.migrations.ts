import { tablesMigration } from '@stoa/persistence';

/** Creates the `sessions` table (portable: SQLite and PostgreSQL). */
const CreateSessions1764460000000 = tablesMigration('CreateSessions1764460000000', {
  sessions: {
    columns: {
      id: 'varchar(200) primary',
      owner: 'varchar(300)',
      status: 'varchar(20)',
      replica: 'varchar(200)',
      created_at: 'bigint',
      last_used_at: 'bigint',
      ended_at: 'bigint null',
      end_reason: 'varchar(200) null',
      metadata: "text default '{}'",
    },
    indices: {
      idx_sessions_owner_status: ['owner', 'status'],
      idx_sessions_replica_status: ['replica', 'status'],
    },
  },
});

/** Every migration of the sessions lib, in order. */
export const SESSION_MIGRATIONS = [CreateSessions1764460000000];
