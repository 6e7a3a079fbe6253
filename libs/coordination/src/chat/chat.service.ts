import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { clip } from '@stoa/core';
import { EventBus } from '../bus/event-bus';
import type { CoordinationOptions } from '../coordination.config';
import {
  ChannelLimitError,
  ChannelNotFoundError,
  fix,
  ResourceLimitError,
  ValidationError,
} from '../coordination.errors';
import { COORDINATION_OPTIONS } from '../coordination.tokens';
import { type ChannelView, iso, type MessageView, SYSTEM_AGENT } from '../coordination.types';
import { ChatRepository } from './chat.repository';
import { llmSummary } from './chat-summary';
import { waitForMessages, type AwaitResult } from './chat-await';

export const GENERAL = '#general';
const TOPICS: Record<string, string> = { [GENERAL]: 'General discussion for all agents' };

export interface PostInput {
  channel: string;
  content: string;
  parent_id?: string;
  content_type?: string;
}

export interface AwaitInput {
  channel: string;
  nmsg: number;
  timeout: number;
  since?: string;
}

/** Append-only channels, created on first post; waits that end when newer messages arrive on any replica. */
@Injectable()
export class ChatService implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(ChatService.name);
  private readonly waiters = new Map<string, number>();
  private readonly unsubscribe: (() => void)[] = [];
  private limiter!: RateLimiterAbstract;

  constructor(
    @Inject(COORDINATION_OPTIONS) private readonly opts: CoordinationOptions,
    private readonly repo: ChatRepository,
    private readonly bus: EventBus,
  ) {}

  onModuleInit(): void {
    const base = {
      points: this.opts.chat.max_messages_per_minute,
      duration: 60,
      keyPrefix: `stoa:square:${this.opts.name}:posts`,
    };
    const redis = this.bus.client;
    this.limiter = redis
      ? new RateLimiterRedis({ ...base, storeClient: redis, insuranceLimiter: new RateLimiterMemory(base) })
      : new RateLimiterMemory(base);
    // Welcomes and departures are posted by the replica that saw the event happen, so each appears once.
    this.unsubscribe.push(
      this.bus.on('agent.registered', (e, local) => {
        if (local && e.arrived)
          void this.announce(`Agent \`${e.agent_id}\` joined (${e.name}${e.role ? `, ${e.role}` : ''})`);
      }),
      this.bus.on('agent.disconnected', (e, local) => {
        if (local) void this.announce(`Agent \`${e.agent_id}\` left (${e.name}: ${e.reason})`);
      }),
    );
  }

  onApplicationShutdown(): void {
    for (const off of this.unsubscribe) off();
  }

  private async announce(content: string): Promise<void> {
    try {
      await this.append(SYSTEM_AGENT, { channel: GENERAL, content });
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'announcement not posted');
    }
  }

  /** `chat_post_message` → `{message_id, channel, created_at}`. */
  async post(
    agentId: string,
    p: PostInput,
  ): Promise<{ message_id: string; channel: string; created_at: string; seq: number }> {
    this.checkPost(p); // a refused post costs no rate budget
    try {
      await this.limiter.consume(agentId);
    } catch (res) {
      if (!(res instanceof RateLimiterRes)) throw res;
      const retry = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
      throw new ResourceLimitError(
        `Rate limit: at most ${this.opts.chat.max_messages_per_minute} messages per minute per agent.`,
        fix(`Wait ${retry} s and post again; batch several updates into one message.`, { retry_after: retry }),
      );
    }
    const m = await this.append(agentId, p);
    return { message_id: m.id, channel: m.channel, created_at: m.created_at, seq: m.seq };
  }

  private checkPost(p: PostInput): void {
    checkChannel(p.channel);
    if (!p.content) throw new ValidationError('content must not be empty.', fix('Post a non-empty message.'));
    const max = this.opts.chat.max_message_length;
    if (p.content.length > max)
      throw new ValidationError(
        `content is ${p.content.length} characters; the limit is ${max}.`,
        fix('Split the message, or put large data on the board (board_put) and post its key.', {
          max_message_length: max,
        }),
      );
  }

  /** Appends a checked post (or one of the square's own announcements, which no agent limit applies to). */
  private async append(agentId: string, p: PostInput): Promise<MessageView> {
    const channel = checkChannel(p.channel);
    let row = await this.repo.channelRef(channel);
    if (!row) {
      if ((await this.repo.countChannels()) >= this.opts.chat.max_channels)
        throw new ChannelLimitError(
          `This square already has ${this.opts.chat.max_channels} channels.`,
          fix('Post in an existing channel (chat_list_channels).', { max_channels: this.opts.chat.max_channels }),
        );
      row = await this.repo.ensureChannel(channel, TOPICS[channel] ?? null);
    }
    const message = await this.repo.append(row, {
      agentId,
      parentId: p.parent_id ?? null,
      contentType: p.content_type ?? 'text',
      content: p.content,
    });
    this.bus.publish({ type: 'chat.message.posted', channel, agent_id: agentId, message_id: message.id, message });
    return message;
  }

  /** `chat_read_messages`: unknown channels read as empty; `since` is inclusive. */
  async read(q: { channel: string; since?: string; limit?: number; order?: 'asc' | 'desc' }): Promise<MessageView[]> {
    const limit = q.limit ?? 3;
    if (!Number.isInteger(limit) || limit < 0 || limit > 1000)
      throw new ValidationError('limit must be a whole number from 0 to 1000.', fix('Pass limit between 0 and 1000.'));
    const row = await this.repo.channelRef(checkChannel(q.channel));
    if (!row) return [];
    return this.repo.read(row, { sinceMs: sinceMs(q.since), limit, order: q.order ?? 'desc' });
  }

  /** chat_await_update calls waiting on this replica, per channel. */
  waiting(): Record<string, number> {
    return Object.fromEntries(this.waiters);
  }

  listChannels(prefix?: string): Promise<ChannelView[]> {
    return this.repo.listChannels(prefix);
  }

  /** `chat_summarize_channel`: statistics always; an LLM summary when configured (statistics on failure). */
  async summarize(channel: string, since?: string) {
    const row = await this.repo.channelRef(checkChannel(channel));
    if (!row)
      throw new ChannelNotFoundError(
        `Channel '${clip(channel, 100)}' does not exist.`,
        fix('List channels with chat_list_channels.'),
      );
    const from = sinceMs(since);
    const s = await this.repo.stats(row, from);
    const hours = s.first !== null && s.last !== null ? Math.round(((s.last - s.first) / 3_600_000) * 100) / 100 : 0;
    const stats = `${s.count} messages from ${s.participants.length} participants over ${hours} hours in ${row.name}${s.last ? ` (last at ${iso(s.last)})` : ''}.`;
    let summary = stats;
    if (this.opts.chat.llm_api_url && s.count > 0) {
      const recent = (await this.repo.read(row, { sinceMs: from, limit: 50, order: 'desc' })).reverse();
      summary = await llmSummary(this.opts.chat, recent).catch(
        (err: Error) => `${stats} (LLM summary unavailable: ${clip(err.message, 200)})`,
      );
    }
    return { summary, message_count: s.count, participants: s.participants, time_span_hours: hours };
  }

  /**
   * `chat_await_update`: waits for `nmsg` messages newer than the call (or, with `since`, at or after it —
   * messages already there count) or the timeout.
   */
  async awaitUpdate(q: AwaitInput, signal?: AbortSignal): Promise<AwaitResult> {
    const channel = checkChannel(q.channel);
    if (!Number.isInteger(q.nmsg) || q.nmsg < 1)
      throw new ValidationError('nmsg must be a whole number ≥ 1.', fix('Pass nmsg: 1 to wake on the next message.'));
    if (!(q.timeout > 0) || q.timeout > this.opts.chat.max_wait_seconds)
      throw new ValidationError(
        `timeout must be more than 0 and at most ${this.opts.chat.max_wait_seconds} seconds.`,
        fix('Pass timeout in seconds, e.g. 120.'),
      );
    const waiting = this.waiters.get(channel) ?? 0;
    if (waiting >= this.opts.chat.max_waiters_per_channel)
      throw new ResourceLimitError(
        `Too many agents are waiting on ${clip(channel, 100)} (limit ${this.opts.chat.max_waiters_per_channel}).`,
        fix('Retry shortly, or read the channel with chat_read_messages.'),
      );
    this.waiters.set(channel, waiting + 1);
    try {
      return await waitForMessages(
        { bus: this.bus, repo: this.repo },
        { channel, nmsg: q.nmsg, timeoutMs: q.timeout * 1000, sinceMs: sinceMs(q.since) },
        signal,
      );
    } finally {
      const n = (this.waiters.get(channel) ?? 1) - 1;
      if (n <= 0) this.waiters.delete(channel);
      else this.waiters.set(channel, n);
    }
  }
}

function checkChannel(channel: string): string {
  const c = channel.trim();
  if (!c) throw new ValidationError('channel must not be empty.', fix(`Name a channel, e.g. '${GENERAL}'.`));
  if (c.length > 200)
    throw new ValidationError('channel names are at most 200 characters.', fix('Use a shorter name.'));
  return c;
}

function sinceMs(since: string | undefined): number | undefined {
  if (since === undefined || since === '') return undefined;
  const ms = Date.parse(since);
  if (Number.isNaN(ms))
    throw new ValidationError(
      `since '${clip(since, 60)}' is not an ISO-8601 time.`,
      fix("Pass e.g. '2026-01-31T12:00:00Z' (a created_at you received)."),
    );
  return ms;
}
