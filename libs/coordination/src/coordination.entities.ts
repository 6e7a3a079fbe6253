import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { epochMs } from '@stoa/persistence';

/** A registered agent: one principal may own several; names are unique in the square. */
@Entity('square_agents')
export class AgentEntity {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  @Index('idx_square_agents_principal')
  @Column({ type: 'varchar', length: 300 })
  principal!: string;

  @Column({ type: 'varchar', length: 200, unique: true })
  name!: string;

  @Column({ type: 'varchar', length: 200, nullable: true })
  role!: string | null;

  /** online | offline (busy is derived: online and holding a lock). */
  @Column({ type: 'varchar', length: 20 })
  status!: string;

  /** JSON array of strings. */
  @Column({ type: 'text' })
  capabilities!: string;

  /** JSON object. */
  @Column({ type: 'text' })
  manifest!: string;

  @Column({ name: 'current_task', type: 'text', nullable: true })
  currentTask!: string | null;

  @Column({ name: 'last_heartbeat_at', type: 'bigint', transformer: epochMs })
  lastHeartbeatAt!: number;

  @Column({ name: 'registered_at', type: 'bigint', transformer: epochMs })
  registeredAt!: number;
}

@Entity('square_channels')
export class ChannelEntity {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  @Column({ type: 'varchar', length: 200, unique: true })
  name!: string;

  @Column({ type: 'text', nullable: true })
  topic!: string | null;

  /** Also the sequence number of the newest message (messages are numbered 1, 2, … per channel). */
  @Column({ name: 'message_count', type: 'integer' })
  messageCount!: number;

  @Column({ name: 'created_at', type: 'bigint', transformer: epochMs })
  createdAt!: number;

  @Column({ name: 'last_activity_at', type: 'bigint', transformer: epochMs, nullable: true })
  lastActivityAt!: number | null;
}

/** Append-only: a message is never updated or deleted. */
@Entity('square_messages')
@Index('idx_square_messages_channel_seq', ['channelId', 'seq'], { unique: true })
@Index('idx_square_messages_channel_at', ['channelId', 'createdAt'])
export class MessageEntity {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  @Column({ name: 'channel_id', type: 'varchar', length: 36 })
  channelId!: string;

  @Column({ type: 'integer' })
  seq!: number;

  @Column({ name: 'agent_id', type: 'varchar', length: 36 })
  agentId!: string;

  @Column({ name: 'parent_id', type: 'varchar', length: 36, nullable: true })
  parentId!: string | null;

  @Column({ name: 'content_type', type: 'varchar', length: 40 })
  contentType!: string;

  @Column({ type: 'text' })
  content!: string;

  @Column({ name: 'created_at', type: 'bigint', transformer: epochMs })
  createdAt!: number;
}

/** One version of a board key; the newest version is the current value. */
@Entity('square_board')
export class BoardEntryEntity {
  @PrimaryColumn({ type: 'varchar', length: 500 })
  key!: string;

  @PrimaryColumn({ type: 'integer' })
  version!: number;

  /** JSON text. */
  @Column({ type: 'text' })
  value!: string;

  /** JSON Schema (text) every later version of the key must satisfy; null = none. */
  @Column({ type: 'text', nullable: true })
  schema!: string | null;

  @Column({ name: 'agent_id', type: 'varchar', length: 36 })
  agentId!: string;

  @Column({ name: 'created_at', type: 'bigint', transformer: epochMs })
  createdAt!: number;
}

/** A lease. The row outlives its holders so the fencing token only ever grows. */
@Entity('square_locks')
export class LockEntity {
  @PrimaryColumn({ type: 'varchar', length: 300 })
  name!: string;

  @Column({ name: 'holder_agent_id', type: 'varchar', length: 36, nullable: true })
  holderAgentId!: string | null;

  @Column({ name: 'fencing_token', type: 'bigint', transformer: epochMs })
  fencingToken!: number;

  @Column({ name: 'acquired_at', type: 'bigint', transformer: epochMs, nullable: true })
  acquiredAt!: number | null;

  @Column({ name: 'expires_at', type: 'bigint', transformer: epochMs, nullable: true })
  expiresAt!: number | null;
}

@Entity('square_signals')
@Index('idx_square_signals_to', ['toAgentId', 'deliveredAt'])
export class SignalEntity {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  @Column({ name: 'to_agent_id', type: 'varchar', length: 36 })
  toAgentId!: string;

  @Column({ name: 'from_agent_id', type: 'varchar', length: 36 })
  fromAgentId!: string;

  @Column({ type: 'varchar', length: 100 })
  kind!: string;

  /** JSON text. */
  @Column({ type: 'text' })
  payload!: string;

  @Column({ name: 'created_at', type: 'bigint', transformer: epochMs })
  createdAt!: number;

  @Column({ name: 'delivered_at', type: 'bigint', transformer: epochMs, nullable: true })
  deliveredAt!: number | null;
}

export const COORDINATION_ENTITIES = [
  AgentEntity,
  ChannelEntity,
  MessageEntity,
  BoardEntryEntity,
  LockEntity,
  SignalEntity,
];
