import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { LRUCache } from 'lru-cache';
import type { EntityManager, Repository } from 'typeorm';
import { GroupCommit } from '@stoa/core';
import { RowInserter } from '@stoa/persistence';
import { ChannelEntity, MessageEntity } from '../coordination.entities';
import { type ChannelView, iso, type MessageView } from '../coordination.types';
import { Transactions } from '../coordination.tx';

export interface NewMessage {
  agentId: string;
  parentId: string | null;
  contentType: string;
  content: string;
}

export interface ReadQuery {
  sinceMs?: number;
  afterSeq?: number;
  limit: number;
  order: 'asc' | 'desc';
}

/** What a post needs of its channel: channels are never renamed or deleted, so this is cached. */
export type ChannelRef = Pick<ChannelEntity, 'id' | 'name'>;

/** The only code touching `square_channels` and `square_messages`. */
@Injectable()
export class ChatRepository {
  private readonly refs = new LRUCache<string, ChannelRef>({ max: 5_000 });
  /** The `bumpCount` statement, built on first use (one connection, one driver). */
  private bumpSql?: string;
  /** A batch's messages in one INSERT from a cached statement (query building cost more than the write). */
  private readonly inserts = new RowInserter(MessageEntity);

  constructor(
    @InjectRepository(ChannelEntity) private readonly channels: Repository<ChannelEntity>,
    @InjectRepository(MessageEntity) private readonly messages: Repository<MessageEntity>,
    private readonly tx: Transactions,
  ) {}

  async findChannel(name: string): Promise<ChannelEntity | undefined> {
    return (await this.channels.findOneBy({ name })) ?? undefined;
  }

  /** The channel's id (cached: a post looks it up without a query once the channel is known). */
  async channelRef(name: string): Promise<ChannelRef | undefined> {
    const hit = this.refs.get(name);
    if (hit) return hit;
    const row = await this.channels.findOne({ where: { name }, select: { id: true, name: true } });
    if (row) this.refs.set(name, { id: row.id, name: row.name });
    return row ?? undefined;
  }

  countChannels(): Promise<number> {
    return this.channels.count();
  }

  /** Creates the channel unless it exists (concurrent creators get the same row). */
  async ensureChannel(name: string, topic: string | null): Promise<ChannelRef> {
    const row = Object.assign(new ChannelEntity(), {
      id: randomUUID(),
      name,
      topic,
      messageCount: 0,
      createdAt: Date.now(),
      lastActivityAt: null,
    });
    await this.channels.createQueryBuilder().insert().into(ChannelEntity).values(row).orIgnore().execute();
    return (await this.channelRef(name)) as ChannelRef;
  }

  /**
   * Appends one message. Posts are group-committed: those arriving while a write is in flight are written together
   * by the next transaction (one per batch, not per post). In it each channel's counter is bumped by its number of
   * posts and read back (RETURNING, on both databases), so concurrent posts on any replica get consecutive, unique
   * sequence numbers in arrival order.
   */
  append(channel: ChannelRef, m: NewMessage): Promise<MessageView> {
    return this.appends.submit({ channel, m });
  }

  private readonly appends = new GroupCommit<{ channel: ChannelRef; m: NewMessage }, MessageView>((batch) =>
    this.tx.run(async (em) => {
      const now = Date.now();
      const perChannel = new Map<string, number>();
      for (const { channel } of batch) perChannel.set(channel.id, (perChannel.get(channel.id) ?? 0) + 1);
      const next = new Map<string, number>();
      // Channels in one order on every replica (PostgreSQL row locks taken in the same order cannot deadlock).
      for (const [id, n] of [...perChannel].sort(([a], [b]) => (a < b ? -1 : 1)))
        next.set(id, (await this.bumpCount(em, id, n, now)) - n + 1);
      const rows = batch.map(({ channel, m }) => {
        const seq = next.get(channel.id)!;
        next.set(channel.id, seq + 1);
        return Object.assign(new MessageEntity(), {
          id: randomUUID(),
          channelId: channel.id,
          seq,
          ...m,
          createdAt: now,
        });
      });
      await this.inserts.insert(em, rows);
      return rows.map((row, i) => messageView(row, batch[i]!.channel.name));
    }),
  );

  /** `message_count + n` for the channel, returning the new count. */
  private async bumpCount(em: EntityManager, channelId: string, n: number, now: number): Promise<number> {
    this.bumpSql ??= bumpCountSql(em);
    const result = await em.queryRunner!.query(this.bumpSql, [n, now, channelId], true);
    const count = (result.records as { message_count: number | string }[])[0]?.message_count;
    if (count === undefined) throw new Error(`channel ${channelId} vanished while posting`);
    return Number(count);
  }

  async read(channel: ChannelRef, q: ReadQuery): Promise<MessageView[]> {
    if (q.limit <= 0) return [];
    const qb = this.messages.createQueryBuilder('m').where('m.channel_id = :c', { c: channel.id });
    if (q.sinceMs !== undefined) qb.andWhere('m.created_at >= :since', { since: q.sinceMs });
    if (q.afterSeq !== undefined) qb.andWhere('m.seq > :after', { after: q.afterSeq });
    const rows = await qb
      .orderBy('m.seq', q.order === 'asc' ? 'ASC' : 'DESC')
      .limit(q.limit)
      .getMany();
    return rows.map((r) => messageView(r, channel.name));
  }

  async listChannels(prefix?: string): Promise<ChannelView[]> {
    const qb = this.channels.createQueryBuilder('c');
    if (prefix) qb.where("c.name LIKE :p ESCAPE '\\'", { p: `${prefix.replace(/[\\%_]/g, '\\$&')}%` });
    const rows = await qb.orderBy('c.name', 'ASC').getMany();
    return rows.map(channelView);
  }

  /** Message count, distinct authors and time span since `sinceMs` (statistics of chat_summarize_channel). */
  async stats(
    channel: ChannelRef,
    sinceMs?: number,
  ): Promise<{ count: number; participants: string[]; first: number | null; last: number | null }> {
    const qb = this.messages.createQueryBuilder('m').where('m.channel_id = :c', { c: channel.id });
    if (sinceMs !== undefined) qb.andWhere('m.created_at >= :since', { since: sinceMs });
    const agg = await qb
      .clone()
      .select('COUNT(*)', 'count')
      .addSelect('MIN(m.created_at)', 'first')
      .addSelect('MAX(m.created_at)', 'last')
      .getRawOne<{ count: string | number; first: string | number | null; last: string | number | null }>();
    const authors = await qb
      .clone()
      .select('DISTINCT m.agent_id', 'agent_id')
      .orderBy('agent_id')
      .getRawMany<{ agent_id: string }>();
    const num = (v: string | number | null | undefined) => (v === null || v === undefined ? null : Number(v));
    return {
      count: num(agg?.count) ?? 0,
      participants: authors.map((a) => a.agent_id),
      first: num(agg?.first),
      last: num(agg?.last),
    };
  }
}

export function messageView(r: MessageEntity, channel: string): MessageView {
  return {
    id: r.id,
    channel_id: r.channelId,
    channel,
    seq: r.seq,
    agent_id: r.agentId,
    parent_id: r.parentId,
    content_type: r.contentType,
    content: r.content,
    created_at: iso(r.createdAt),
  };
}

function channelView(c: ChannelEntity): ChannelView {
  return {
    name: c.name,
    topic: c.topic,
    message_count: c.messageCount,
    last_activity_at: c.lastActivityAt === null ? null : iso(c.lastActivityAt),
    created_at: iso(c.createdAt),
  };
}

/** The statement of `bumpCount` for this connection's driver (built once: table path and placeholders never change). */
function bumpCountSql(em: EntityManager): string {
  const { driver } = em.connection;
  const table = em.connection
    .getMetadata(ChannelEntity)
    .tablePath.split('.')
    .map((part) => driver.escape(part))
    .join('.');
  const [n, at, id] = driver.options.type === 'postgres' ? ['$1', '$2', '$3'] : ['?', '?', '?'];
  return `UPDATE ${table} SET message_count = message_count + ${n}, last_activity_at = ${at} WHERE id = ${id} RETURNING message_count`;
}
