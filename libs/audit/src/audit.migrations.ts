import { type MigrationInterface, type QueryRunner, Table, TableIndex } from 'typeorm';

/** Creates `audit_records` (portable: SQLite and PostgreSQL). */
export class CreateAudit1764900000000 implements MigrationInterface {
  name = 'CreateAudit1764900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      new Table({
        name: 'audit_records',
        columns: [
          { name: 'id', type: 'varchar', length: '40', isPrimary: true },
          { name: 'at', type: 'bigint' },
          { name: 'principal', type: 'varchar', length: '300' },
          { name: 'tool', type: 'varchar', length: '200' },
          { name: 'upstream', type: 'varchar', length: '100' },
          { name: 'session_id', type: 'varchar', length: '200', isNullable: true },
          { name: 'outcome', type: 'varchar', length: '20' },
          { name: 'decision', type: 'varchar', length: '300' },
          { name: 'duration_ms', type: 'integer' },
          { name: 'bytes_in', type: 'integer' },
          { name: 'bytes_out', type: 'integer' },
          { name: 'code_sha256', type: 'varchar', length: '64', isNullable: true },
          { name: 'code', type: 'text', isNullable: true },
        ],
      }),
    );
    await q.createIndex('audit_records', new TableIndex({ name: 'idx_audit_at', columnNames: ['at'] }));
    await q.createIndex(
      'audit_records',
      new TableIndex({ name: 'idx_audit_principal_at', columnNames: ['principal', 'at'] }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropTable('audit_records');
  }
}

export const AUDIT_MIGRATIONS = [CreateAudit1764900000000];
