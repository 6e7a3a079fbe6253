import { type MigrationInterface, type QueryRunner, Table, TableIndex } from 'typeorm';

/** Creates `artifact_records` and `transfer_records` (portable: SQLite and PostgreSQL). */
export class CreateTransferRecords1764500000000 implements MigrationInterface {
  name = 'CreateTransferRecords1764500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      new Table({
        name: 'artifact_records',
        columns: [
          { name: 'id', type: 'varchar', length: '40', isPrimary: true },
          { name: 'at', type: 'bigint' },
          { name: 'owner', type: 'varchar', length: '300' },
          { name: 'session_id', type: 'varchar', length: '200' },
          { name: 'name', type: 'varchar', length: '1000' },
          { name: 'size_bytes', type: 'bigint' },
          { name: 'mime_type', type: 'varchar', length: '200' },
        ],
      }),
    );
    await q.createIndex(
      'artifact_records',
      new TableIndex({ name: 'idx_artifacts_session', columnNames: ['session_id'] }),
    );
    await q.createIndex(
      'artifact_records',
      new TableIndex({ name: 'idx_artifacts_owner_at', columnNames: ['owner', 'at'] }),
    );
    await q.createTable(
      new Table({
        name: 'transfer_records',
        columns: [
          { name: 'id', type: 'varchar', length: '40', isPrimary: true },
          { name: 'at', type: 'bigint' },
          { name: 'owner', type: 'varchar', length: '300' },
          { name: 'direction', type: 'varchar', length: '4' },
          { name: 'kind', type: 'varchar', length: '10' },
          { name: 'peer', type: 'varchar', length: '200' },
          { name: 'session_id', type: 'varchar', length: '200', isNullable: true },
          { name: 'data_ref', type: 'varchar', length: '1000' },
          { name: 'name', type: 'varchar', length: '1000' },
          { name: 'size_bytes', type: 'bigint', isNullable: true },
          { name: 'serializer', type: 'varchar', length: '20', isNullable: true },
          { name: 'success', type: 'boolean' },
          { name: 'error', type: 'text', isNullable: true },
          { name: 'remote_uri', type: 'text', isNullable: true },
          { name: 'duration_ms', type: 'integer' },
        ],
      }),
    );
    await q.createIndex(
      'transfer_records',
      new TableIndex({ name: 'idx_transfers_owner_at', columnNames: ['owner', 'at'] }),
    );
    await q.createIndex('transfer_records', new TableIndex({ name: 'idx_transfers_at', columnNames: ['at'] }));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropTable('transfer_records');
    await q.dropTable('artifact_records');
  }
}

/** Every migration of the transfer lib, in order. */
export const TRANSFER_MIGRATIONS = [CreateTransferRecords1764500000000];
