import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { epochMs } from '@stoa/persistence';

@Entity('jobs')
@Index('idx_jobs_owner_status', ['owner', 'status'])
@Index('idx_jobs_batch', ['batchId'])
export class JobEntity {
  @PrimaryColumn({ type: 'varchar', length: 40 }) id!: string;
  @Column({ type: 'varchar', length: 300 }) owner!: string;
  @Column({ type: 'varchar', length: 20 }) kind!: string;
  @Column({ name: 'session_id', type: 'varchar', length: 200 }) sessionId!: string;
  @Column({ name: 'batch_id', type: 'varchar', length: 40, nullable: true }) batchId!: string | null;
  @Column({ name: 'input_index', type: 'integer', nullable: true }) inputIndex!: number | null;
  @Column({ type: 'varchar', length: 20 }) status!: string;
  @Column({ type: 'text', default: '' }) description!: string;
  @Column({ type: 'varchar', length: 200, nullable: true }) replica!: string | null;
  @Column({ name: 'created_at', type: 'bigint', transformer: epochMs }) createdAt!: number;
  @Column({ name: 'started_at', type: 'bigint', nullable: true, transformer: epochMs }) startedAt!: number | null;
  @Column({ name: 'completed_at', type: 'bigint', nullable: true, transformer: epochMs }) completedAt!: number | null;
  @Column({ type: 'text', default: '' }) stdout!: string;
  @Column({ type: 'text', default: '' }) stderr!: string;
  @Column({ type: 'text', nullable: true }) error!: string | null;
  @Column({ type: 'text', nullable: true }) result!: string | null;
  @Column({ type: 'text', nullable: true }) payload!: string | null;
  @Column({ type: 'boolean', default: false }) promoted!: boolean;
}

@Entity('batches')
@Index('idx_batches_owner', ['owner'])
export class BatchEntity {
  @PrimaryColumn({ type: 'varchar', length: 40 }) id!: string;
  @Column({ type: 'varchar', length: 300 }) owner!: string;
  @Column({ name: 'parent_session_id', type: 'varchar', length: 200 }) parentSessionId!: string;
  @Column({ name: 'result_variable', type: 'varchar', length: 200 }) resultVariable!: string;
  @Column({ type: 'integer' }) total!: number;
  @Column({ name: 'created_at', type: 'bigint', transformer: epochMs }) createdAt!: number;
  @Column({ name: 'cancelled_at', type: 'bigint', nullable: true, transformer: epochMs }) cancelledAt!: number | null;
}
