import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { epochMs } from '@stoa/persistence';

/** A stashed object's metadata in the shared handle store (`transfer.handles.store: database`). */
@Entity('handles')
@Index('idx_handles_owner_created', ['ownerKey', 'createdAt'])
@Index('idx_handles_expires', ['expiresAt'])
export class HandleEntity {
  /** sha256 prefix of the owner: the key is (owner, id), so a planted id never touches another owner's handle. */
  @PrimaryColumn({ name: 'owner_key', type: 'varchar', length: 64 })
  ownerKey!: string;

  @PrimaryColumn({ type: 'varchar', length: 16 })
  id!: string;

  @Column({ type: 'varchar', length: 20 })
  serializer!: string;

  @Column({ type: 'varchar', length: 200 })
  type!: string;

  @Column({ type: 'bigint', transformer: epochMs })
  size!: number;

  @Column({ name: 'created_at', type: 'bigint', transformer: epochMs })
  createdAt!: number;

  @Column({ name: 'expires_at', type: 'bigint', transformer: epochMs })
  expiresAt!: number;
}

/** One piece of a stashed object's payload (base64, portable across SQLite and PostgreSQL). */
@Entity('handle_chunks')
export class HandleChunkEntity {
  @PrimaryColumn({ name: 'owner_key', type: 'varchar', length: 64 })
  ownerKey!: string;

  @PrimaryColumn({ name: 'handle_id', type: 'varchar', length: 16 })
  handleId!: string;

  @PrimaryColumn({ type: 'integer' })
  seq!: number;

  @Column({ type: 'text' })
  data!: string;
}
