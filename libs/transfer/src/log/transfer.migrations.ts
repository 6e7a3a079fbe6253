import { tablesMigration } from '@stoa/persistence';

/** Creates `artifact_records` and `transfer_records` (portable: SQLite and PostgreSQL). */
const CreateTransferRecords1764500000000 = tablesMigration('CreateTransferRecords1764500000000', {
  artifact_records: {
    columns: {
      id: 'varchar(40) primary',
      at: 'bigint',
      owner: 'varchar(300)',
      session_id: 'varchar(200)',
      name: 'varchar(1000)',
      size_bytes: 'bigint',
      mime_type: 'varchar(200)',
    },
    indices: {
      idx_artifacts_session: ['session_id'],
      idx_artifacts_owner_at: ['owner', 'at'],
    },
  },
  transfer_records: {
    columns: {
      id: 'varchar(40) primary',
      at: 'bigint',
      owner: 'varchar(300)',
      direction: 'varchar(4)',
      kind: 'varchar(10)',
      peer: 'varchar(200)',
      session_id: 'varchar(200) null',
      data_ref: 'varchar(1000)',
      name: 'varchar(1000)',
      size_bytes: 'bigint null',
      serializer: 'varchar(20) null',
      success: 'boolean',
      error: 'text null',
      remote_uri: 'text null',
      duration_ms: 'integer',
    },
    indices: {
      idx_transfers_owner_at: ['owner', 'at'],
      idx_transfers_at: ['at'],
    },
  },
});

/** Every migration of the transfer lib, in order. */
export const TRANSFER_MIGRATIONS = [CreateTransferRecords1764500000000];
