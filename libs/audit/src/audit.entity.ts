import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { epochMs } from '@stoa/persistence';

/** One proxied call as the gateway saw it. */
@Entity('audit_records')
@Index('idx_audit_at', ['at'])
@Index('idx_audit_principal_at', ['principal', 'at'])
export class AuditEntity {
  @PrimaryColumn({ type: 'varchar', length: 40 })
  id!: string;

  @Column({ type: 'bigint', transformer: epochMs })
  at!: number;

  @Column({ type: 'varchar', length: 300 })
  principal!: string;

  @Column({ type: 'varchar', length: 200 })
  tool!: string;

  @Column({ type: 'varchar', length: 100 })
  upstream!: string;

  @Column({ name: 'session_id', type: 'varchar', length: 200, nullable: true })
  sessionId!: string | null;

  /** ok | tool_error | denied | rate_limited | upstream_error */
  @Column({ type: 'varchar', length: 20 })
  outcome!: string;

  /** allowed | the policy rule that denied the call */
  @Column({ type: 'varchar', length: 300 })
  decision!: string;

  @Column({ name: 'duration_ms', type: 'integer' })
  durationMs!: number;

  @Column({ name: 'bytes_in', type: 'integer' })
  bytesIn!: number;

  @Column({ name: 'bytes_out', type: 'integer' })
  bytesOut!: number;

  /** sha256 of the code cell (execute calls). */
  @Column({ name: 'code_sha256', type: 'varchar', length: 64, nullable: true })
  codeSha256!: string | null;

  /** The code itself, only with audit.store_code: true. */
  @Column({ type: 'text', nullable: true })
  code!: string | null;
}
