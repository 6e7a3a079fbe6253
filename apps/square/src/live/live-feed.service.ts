import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import {
  BoardService,
  ChatService,
  EventBus,
  LockService,
  RegistryService,
  type MessageView,
  type SquareEventType,
} from '@stoa/coordination';

/** What the live view shows: the reference's admin TUI (agents, channels, messages) plus board, locks, waits. */
export interface LiveSnapshot {
  at: string;
  agents: Awaited<ReturnType<RegistryService['listRecords']>>;
  channels: Awaited<ReturnType<ChatService['listChannels']>>;
  messages: MessageView[];
  board: Awaited<ReturnType<BoardService['list']>>;
  locks: Awaited<ReturnType<LockService['list']>>;
  waiters: Record<string, number>;
}

const EVENTS: SquareEventType[] = [
  'agent.registered',
  'agent.disconnected',
  'chat.message.posted',
  'board.updated',
  'lock.released',
  'signal.sent',
];
/** Events within this window make one snapshot. */
const DEBOUNCE_MS = 100;
/** Presence, leases and waits change without events: looked at this often while someone watches. */
const POLL_MS = 1_000;
const RECENT_MESSAGES = 50;

/** Gets each snapshot as its JSON text: serialised once per change, however many watch. */
type Listener = (json: string) => void;

/**
 * Snapshots of the square for the live view, pushed to every watcher when something happened (any replica's
 * events) or changed (polled while anyone watches); nothing runs while nobody does.
 */
@Injectable()
export class LiveFeed implements OnApplicationShutdown {
  private readonly logger = new Logger(LiveFeed.name);
  private readonly listeners = new Set<Listener>();
  private readonly off: (() => void)[] = [];
  private poll?: NodeJS.Timeout;
  private pending?: NodeJS.Timeout;
  private last = '';

  constructor(
    private readonly bus: EventBus,
    private readonly registry: RegistryService,
    private readonly chat: ChatService,
    private readonly board: BoardService,
    private readonly locks: LockService,
  ) {}

  /** Sends the current snapshot to `listener`, then every changed one; returns the unsubscribe function. */
  async watch(listener: Listener): Promise<() => void> {
    const first = await this.snapshot(); // a failure here leaves nothing subscribed
    if (!this.listeners.size) this.startWatching();
    this.listeners.add(listener);
    listener(JSON.stringify(first));
    return () => {
      this.listeners.delete(listener);
      if (!this.listeners.size) this.stopWatching();
    };
  }

  onApplicationShutdown(): void {
    this.listeners.clear();
    this.stopWatching();
  }

  async snapshot(): Promise<LiveSnapshot> {
    const [agents, channels, board, locks] = await Promise.all([
      this.registry.listRecords(),
      this.chat.listChannels(),
      this.board.list(''),
      this.locks.list(),
    ]);
    // The newest messages of the most recently active channels, oldest first.
    const active = [...channels]
      .filter((c) => c.last_activity_at)
      .sort((a, b) => (b.last_activity_at as string).localeCompare(a.last_activity_at as string))
      .slice(0, 10);
    const recent = await Promise.all(active.map((c) => this.chat.read({ channel: c.name, limit: RECENT_MESSAGES })));
    const messages = recent
      .flat()
      .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.seq - b.seq)
      .slice(-RECENT_MESSAGES);
    return { at: new Date().toISOString(), agents, channels, messages, board, locks, waiters: this.chat.waiting() };
  }

  private startWatching(): void {
    for (const type of EVENTS) this.off.push(this.bus.on(type, () => this.soon()));
    this.poll = setInterval(() => this.soon(), POLL_MS);
  }

  private stopWatching(): void {
    for (const off of this.off.splice(0)) off();
    clearInterval(this.poll);
    clearTimeout(this.pending);
    this.pending = undefined;
    this.last = '';
  }

  private soon(): void {
    if (this.pending) return;
    this.pending = setTimeout(() => void this.push(), DEBOUNCE_MS);
  }

  private async push(): Promise<void> {
    try {
      const s = await this.snapshot();
      const text = JSON.stringify({ ...s, at: undefined });
      if (text === this.last) return;
      this.last = text;
      const json = JSON.stringify(s);
      for (const l of this.listeners) l(json);
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'live view snapshot failed; the next change retries');
    } finally {
      this.pending = undefined;
    }
  }
}
