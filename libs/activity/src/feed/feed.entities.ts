import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { epochMs } from '@stoa/persistence';

/** One stored activity event; `body` is its JSON as readers get it (figures as references). */
@Entity('activity_events')
@Index('idx_activity_events_at', ['at'])
@Index('idx_activity_events_owner', ['owner', 'id'])
export class ActivityEventEntity {
  /** Time-ordered (ms, sequence, random): ordering by id is ordering by arrival. */
  @PrimaryColumn({ type: 'varchar', length: 32 })
  id!: string;

  /** The event's own time (epoch ms), which retention measures. */
  @Column({ type: 'bigint', transformer: epochMs })
  at!: number;

  @Column({ type: 'varchar', length: 40 })
  type!: string;

  @Column({ type: 'varchar', length: 200 })
  server!: string;

  /** The principal whose session it is; null → only admins see it. */
  @Column({ type: 'varchar', length: 300, nullable: true })
  owner!: string | null;

  @Column({ name: 'session_id', type: 'varchar', length: 200, nullable: true })
  sessionId!: string | null;

  @Column({ type: 'text' })
  body!: string;
}

/** A figure, stored once per owner and content, referenced by the events that showed it. */
@Entity('activity_figures')
@Index('idx_activity_figures_at', ['at'])
export class ActivityFigureEntity {
  /** sha256 of owner, MIME type and data. */
  @PrimaryColumn({ type: 'varchar', length: 64 })
  id!: string;

  @Column({ type: 'varchar', length: 300, nullable: true })
  owner!: string | null;

  @Column({ name: 'mime_type', type: 'varchar', length: 40 })
  mimeType!: string;

  /** Base64 for PNG, the SVG text for SVG. */
  @Column({ type: 'text' })
  data!: string;

  @Column({ name: 'size_bytes', type: 'integer' })
  sizeBytes!: number;

  /** Last time an event referenced it (epoch ms); retention measures this. */
  @Column({ type: 'bigint', transformer: epochMs })
  at!: number;
}
