import { type MigrationInterface, type QueryRunner, Table, TableIndex } from 'typeorm';

/** Creates `jobs` and `batches` (portable: SQLite and PostgreSQL). */
export class CreateJobs1764470000000 implements MigrationInterface {
  name = 'CreateJobs1764470000000';

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      new Table({
        name: 'jobs',
        columns: [
          { name: 'id', type: 'varchar', length: '40', isPrimary: true },
          { name: 'owner', type: 'varchar', length: '300' },
          { name: 'kind', type: 'varchar', length: '20' },
          { name: 'session_id', type: 'varchar', length: '200' },
          { name: 'batch_id', type: 'varchar', length: '40', isNullable: true },
          { name: 'input_index', type: 'integer', isNullable: true },
          { name: 'status', type: 'varchar', length: '20' },
          { name: 'description', type: 'text', default: "''" },
          { name: 'replica', type: 'varchar', length: '200', isNullable: true },
          { name: 'created_at', type: 'bigint' },
          { name: 'started_at', type: 'bigint', isNullable: true },
          { name: 'completed_at', type: 'bigint', isNullable: true },
          { name: 'stdout', type: 'text', default: "''" },
          { name: 'stderr', type: 'text', default: "''" },
          { name: 'error', type: 'text', isNullable: true },
          { name: 'result', type: 'text', isNullable: true },
          { name: 'payload', type: 'text', isNullable: true },
          { name: 'promoted', type: 'boolean', default: false },
        ],
      }),
    );
    await q.createIndex('jobs', new TableIndex({ name: 'idx_jobs_owner_status', columnNames: ['owner', 'status'] }));
    await q.createIndex('jobs', new TableIndex({ name: 'idx_jobs_batch', columnNames: ['batch_id'] }));
    await q.createTable(
      new Table({
        name: 'batches',
        columns: [
          { name: 'id', type: 'varchar', length: '40', isPrimary: true },
          { name: 'owner', type: 'varchar', length: '300' },
          { name: 'parent_session_id', type: 'varchar', length: '200' },
          { name: 'result_variable', type: 'varchar', length: '200' },
          { name: 'total', type: 'integer' },
          { name: 'created_at', type: 'bigint' },
          { name: 'cancelled_at', type: 'bigint', isNullable: true },
        ],
      }),
    );
    await q.createIndex('batches', new TableIndex({ name: 'idx_batches_owner', columnNames: ['owner'] }));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropTable('batches');
    await q.dropTable('jobs');
  }
}

/** Every migration of the jobs lib, in order. */
export const JOB_MIGRATIONS = [CreateJobs1764470000000];
