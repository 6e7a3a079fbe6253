import { createHash } from 'node:crypto';
import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { DataSource, LessThan, type Repository } from 'typeorm';
import type { ActivityEvent } from '../activity.types';
import { eventId } from './event-id';
import { ActivityEventEntity, ActivityFigureEntity } from './feed.entities';
import { type FeedDisplay, type FeedEvent, type FeedReader, type FeedSettings } from './feed.types';

export const FEED_SETTINGS = Symbol('FEED_SETTINGS');

/** A figure's bytes for `GET /figures/{id}`. */
export interface StoredFigure {
  mimeType: string;
  bytes: Buffer;
}

/**
 * Recent activity events in the database, with retention. A batch is stored whole or not at all; each figure is
 * stored once per owner (content-addressed) and events reference it, so a plot shown a hundred times costs one row.
 */
@Injectable()
export class EventStore implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(EventStore.name);
  private sweeper?: NodeJS.Timeout;

  constructor(
    @Inject(FEED_SETTINGS) private readonly settings: FeedSettings,
    private readonly db: DataSource,
    @InjectRepository(ActivityEventEntity) private readonly events: Repository<ActivityEventEntity>,
    @InjectRepository(ActivityFigureEntity) private readonly figures: Repository<ActivityFigureEntity>,
  ) {}

  async onModuleInit(): Promise<void> {
    // The feed is a recent-window cache for dashboards: in WAL mode `NORMAL` stays consistent and skips the fsync
    // per commit (4–5 ms here, more than the rest of an ingest), at the risk of the last commits on a power loss.
    if (this.db.options.type === 'better-sqlite3') await this.db.query('PRAGMA synchronous = NORMAL');
    void this.purge();
    this.sweeper = setInterval(() => void this.purge(), this.settings.sweepIntervalMs);
    this.sweeper.unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.sweeper);
  }

  /** Stores validated events in one transaction; returns them as readers see them, in order. */
  async ingest(batch: readonly ActivityEvent[], now = Date.now()): Promise<FeedEvent[]> {
    const figures = new Map<string, ActivityFigureEntity>();
    const out: FeedEvent[] = [];
    const rows = batch.map((e) => {
      const { displays, ...rest } = e;
      const timestamp = Math.min(e.timestamp ?? now / 1000, now / 1000 + 60);
      const view: FeedEvent = { ...rest, id: eventId(now), timestamp };
      if (displays?.length) view.displays = displays.map((d) => figureRef(d, e.user ?? null, now, figures));
      out.push(view);
      return Object.assign(new ActivityEventEntity(), {
        id: view.id,
        at: Math.round(timestamp * 1000),
        type: e.type,
        server: e.server,
        owner: e.user ?? null,
        sessionId: e.session_id ?? null,
        body: JSON.stringify(view),
      });
    });
    await this.db.transaction(async (m) => {
      if (figures.size) await m.upsert(ActivityFigureEntity, [...figures.values()], ['id']);
      await m.insert(ActivityEventEntity, rows);
    });
    return out;
  }

  /** The newest `limit` events `reader` may see, oldest first; only those after `afterId` when given. */
  async recent(reader: FeedReader, o: { limit: number; sinceMs: number; afterId?: string }): Promise<FeedEvent[]> {
    const qb = this.events.createQueryBuilder('e').where('e.at >= :since', { since: Math.floor(o.sinceMs) });
    if (!reader.admin) qb.andWhere('e.owner = :sub', { sub: reader.sub });
    if (o.afterId) qb.andWhere('e.id > :after', { after: o.afterId });
    const rows = await qb.orderBy('e.id', 'DESC').limit(o.limit).getMany();
    return rows.reverse().map((r) => JSON.parse(r.body) as FeedEvent);
  }

  /** A figure `reader` may see, else undefined (someone else's answers like a missing one). */
  async figure(reader: FeedReader, id: string): Promise<StoredFigure | undefined> {
    const row = await this.figures.findOneBy({ id });
    if (!row || !(reader.admin || (row.owner !== null && row.owner === reader.sub))) return undefined;
    const bytes = row.mimeType === 'image/png' ? Buffer.from(row.data, 'base64') : Buffer.from(row.data, 'utf8');
    return { mimeType: row.mimeType, bytes };
  }

  /** Deletes events and figures past the retention period; returns how many events. */
  async purge(now = Date.now()): Promise<number> {
    const cutoff = now - this.settings.retentionMs;
    try {
      const r = await this.events.delete({ at: LessThan(cutoff) });
      await this.figures.delete({ at: LessThan(cutoff) });
      return r.affected ?? 0;
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'activity retention sweep failed');
      return 0;
    }
  }
}

function figureRef(
  d: NonNullable<ActivityEvent['displays']>[number],
  owner: string | null,
  now: number,
  figures: Map<string, ActivityFigureEntity>,
): FeedDisplay {
  if (!d.data) return { mime_type: d.mime_type, metadata: d.metadata };
  const id = createHash('sha256')
    .update(`${owner ?? ''}\n${d.mime_type}\n`)
    .update(d.data)
    .digest('hex');
  if (!figures.has(id))
    figures.set(
      id,
      Object.assign(new ActivityFigureEntity(), {
        id,
        owner,
        mimeType: d.mime_type,
        data: d.data,
        sizeBytes: d.data.length,
        at: now,
      }),
    );
  return { mime_type: d.mime_type, figure: id, metadata: d.metadata };
}
