import { type MigrationInterface, type QueryRunner, Table, TableIndex } from 'typeorm';

/** Creates `activity_events` and `activity_figures` (portable: SQLite and PostgreSQL). */
export class CreateActivityFeed1767000000000 implements MigrationInterface {
  name = 'CreateActivityFeed1767000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      new Table({
        name: 'activity_events',
        columns: [
          { name: 'id', type: 'varchar', length: '32', isPrimary: true },
          { name: 'at', type: 'bigint' },
          { name: 'type', type: 'varchar', length: '40' },
          { name: 'server', type: 'varchar', length: '200' },
          { name: 'owner', type: 'varchar', length: '300', isNullable: true },
          { name: 'session_id', type: 'varchar', length: '200', isNullable: true },
          { name: 'body', type: 'text' },
        ],
      }),
    );
    await q.createIndex('activity_events', new TableIndex({ name: 'idx_activity_events_at', columnNames: ['at'] }));
    await q.createIndex(
      'activity_events',
      new TableIndex({ name: 'idx_activity_events_owner', columnNames: ['owner', 'id'] }),
    );
    await q.createTable(
      new Table({
        name: 'activity_figures',
        columns: [
          { name: 'id', type: 'varchar', length: '64', isPrimary: true },
          { name: 'owner', type: 'varchar', length: '300', isNullable: true },
          { name: 'mime_type', type: 'varchar', length: '40' },
          { name: 'data', type: 'text' },
          { name: 'size_bytes', type: 'integer' },
          { name: 'at', type: 'bigint' },
        ],
      }),
    );
    await q.createIndex('activity_figures', new TableIndex({ name: 'idx_activity_figures_at', columnNames: ['at'] }));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropTable('activity_figures');
    await q.dropTable('activity_events');
  }
}

export const ACTIVITY_MIGRATIONS = [CreateActivityFeed1767000000000];
