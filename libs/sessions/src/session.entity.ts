import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { epochMs } from '@stoa/persistence';

@Entity('sessions')
@Index('idx_sessions_owner_status', ['owner', 'status'])
@Index('idx_sessions_replica_status', ['replica', 'status'])
export class SessionEntity {
  @PrimaryColumn({ type: 'varchar', length: 200 })
  id!: string;

  @Column({ type: 'varchar', length: 300 })
  owner!: string;

  /** active | closed | expired */
  @Column({ type: 'varchar', length: 20 })
  status!: string;

  @Column({ type: 'varchar', length: 200 })
  replica!: string;

  @Column({ name: 'created_at', type: 'bigint', transformer: epochMs })
  createdAt!: number;

  @Column({ name: 'last_used_at', type: 'bigint', transformer: epochMs })
  lastUsedAt!: number;

  @Column({ name: 'ended_at', type: 'bigint', nullable: true, transformer: epochMs })
  endedAt!: number | null;

  @Column({ name: 'end_reason', type: 'varchar', length: 200, nullable: true })
  endReason!: string | null;

  /** JSON text: how the session was created (mcp_connection, auto_created…). */
  @Column({ type: 'text', default: '{}' })
  metadata!: string;
}
