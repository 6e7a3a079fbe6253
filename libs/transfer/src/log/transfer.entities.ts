import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { epochMs } from '@stoa/persistence';

/** What every transfer-log row has: its id, when (epoch ms) and whose. */
abstract class OwnedRecord {
  @PrimaryColumn({ type: 'varchar', length: 40 })
  id!: string;

  @Column({ type: 'bigint', transformer: epochMs })
  at!: number;

  @Column({ type: 'varchar', length: 300 })
  owner!: string;
}

/** A file an execution wrote to its session's AGORA_OUTPUT_DIR (reference §2.7). */
@Entity('artifact_records')
@Index('idx_artifacts_session', ['sessionId'])
@Index('idx_artifacts_owner_at', ['owner', 'at'])
export class ArtifactEntity extends OwnedRecord {
  @Column({ name: 'session_id', type: 'varchar', length: 200 })
  sessionId!: string;

  @Column({ type: 'varchar', length: 1000 })
  name!: string;

  @Column({ name: 'size_bytes', type: 'bigint', transformer: epochMs })
  sizeBytes!: number;

  @Column({ name: 'mime_type', type: 'varchar', length: 200 })
  mimeType!: string;
}

/** One send (out) or object receipt (in). */
@Entity('transfer_records')
@Index('idx_transfers_owner_at', ['owner', 'at'])
@Index('idx_transfers_at', ['at'])
export class TransferEntity extends OwnedRecord {
  /** out | in */
  @Column({ type: 'varchar', length: 4 })
  direction!: string;

  /** user | local | blob | peer */
  @Column({ type: 'varchar', length: 10 })
  kind!: string;

  /** The `to` of a send, or the source server of a receipt. */
  @Column({ type: 'varchar', length: 200 })
  peer!: string;

  @Column({ name: 'session_id', type: 'varchar', length: 200, nullable: true })
  sessionId!: string | null;

  @Column({ name: 'data_ref', type: 'varchar', length: 1000 })
  dataRef!: string;

  @Column({ type: 'varchar', length: 1000 })
  name!: string;

  @Column({ name: 'size_bytes', type: 'bigint', transformer: epochMs, nullable: true })
  sizeBytes!: number | null;

  @Column({ type: 'varchar', length: 20, nullable: true })
  serializer!: string | null;

  @Column({ type: 'boolean' })
  success!: boolean;

  @Column({ type: 'text', nullable: true })
  error!: string | null;

  @Column({ name: 'remote_uri', type: 'text', nullable: true })
  remoteUri!: string | null;

  @Column({ name: 'duration_ms', type: 'integer' })
  durationMs!: number;
}
