import { type MigrationInterface, type QueryRunner, Table, TableIndex } from 'typeorm';

/** Creates the `sessions` table (portable: SQLite and PostgreSQL). */
export class CreateSessions1764460000000 implements MigrationInterface {
  name = 'CreateSessions1764460000000';

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      new Table({
        name: 'sessions',
        columns: [
          { name: 'id', type: 'varchar', length: '200', isPrimary: true },
          { name: 'owner', type: 'varchar', length: '300' },
          { name: 'status', type: 'varchar', length: '20' },
          { name: 'replica', type: 'varchar', length: '200' },
          { name: 'created_at', type: 'bigint' },
          { name: 'last_used_at', type: 'bigint' },
          { name: 'ended_at', type: 'bigint', isNullable: true },
          { name: 'end_reason', type: 'varchar', length: '200', isNullable: true },
          { name: 'metadata', type: 'text', default: "'{}'" },
        ],
      }),
    );
    await q.createIndex(
      'sessions',
      new TableIndex({ name: 'idx_sessions_owner_status', columnNames: ['owner', 'status'] }),
    );
    await q.createIndex(
      'sessions',
      new TableIndex({ name: 'idx_sessions_replica_status', columnNames: ['replica', 'status'] }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropTable('sessions');
  }
}

/** Every migration of the sessions lib, in order. */
export const SESSION_MIGRATIONS = [CreateSessions1764460000000];
