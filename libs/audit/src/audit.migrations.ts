import { tablesMigration } from '@stoa/persistence';

/** Creates `audit_records` (portable: SQLite and PostgreSQL). */
const CreateAudit1764900000000 = tablesMigration('CreateAudit1764900000000', {
  audit_records: {
    columns: {
      id: 'varchar(40) primary',
      at: 'bigint',
      principal: 'varchar(300)',
      tool: 'varchar(200)',
      upstream: 'varchar(100)',
      session_id: 'varchar(200) null',
      outcome: 'varchar(20)',
      decision: 'varchar(300)',
      duration_ms: 'integer',
      bytes_in: 'integer',
      bytes_out: 'integer',
      code_sha256: 'varchar(64) null',
      code: 'text null',
    },
    indices: {
      idx_audit_at: ['at'],
      idx_audit_principal_at: ['principal', 'at'],
    },
  },
});

export const AUDIT_MIGRATIONS = [CreateAudit1764900000000];
