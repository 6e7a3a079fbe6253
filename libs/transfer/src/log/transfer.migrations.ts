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

/** Creates `handles` and `handle_chunks`: stashed objects shared by the replicas of one database. */
const CreateHandleStore1767500000000 = tablesMigration('CreateHandleStore1767500000000', {
  handles: {
    columns: {
      owner_key: 'varchar(64) primary',
      id: 'varchar(16) primary',
      serializer: 'varchar(20)',
      type: 'varchar(200)',
      size: 'bigint',
      created_at: 'bigint',
      expires_at: 'bigint',
    },
    indices: {
      idx_handles_owner_created: ['owner_key', 'created_at'],
      idx_handles_expires: ['expires_at'],
    },
  },
  handle_chunks: {
    columns: {
      owner_key: 'varchar(64) primary',
      handle_id: 'varchar(16) primary',
      seq: 'integer primary',
      data: 'text',
    },
  },
});

/** Every migration of the transfer lib, in order. */
export const TRANSFER_MIGRATIONS = [CreateTransferRecords1764500000000, CreateHandleStore1767500000000];
