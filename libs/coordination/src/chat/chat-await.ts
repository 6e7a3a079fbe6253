import type { EventBus } from '../bus/event-bus';
import type { MessageView } from '../coordination.types';
import type { ChatRepository } from './chat.repository';

/** The reference's answer: messages in chronological order, whether the call blocked, whether it timed out. */
export interface AwaitResult {
  messages: MessageView[];
  waited: boolean;
  timed_out: boolean;
}

const MAX_RETURNED = 1000;

/**
 * Subscribes first, then reads where the channel stands, so a message committed in between is either below the
 * baseline or delivered as an event — never lost. A message counts as newer than the call when its sequence number
 * is above that baseline or it was created in or after the millisecond the call began in (a post in the same
 * millisecond counts as newer): the baseline is read after the call began, and a
 * post committed while that read was on its way (a post on another replica, a slow database) is in the baseline
 * yet newer than the call. Events carry the message, so a wake needs no database read; a wait that times out
 * re-reads once in case an event was lost (Redis pub/sub is best effort).
 */
export async function waitForMessages(
  deps: { bus: EventBus; repo: ChatRepository },
  q: { channel: string; nmsg: number; timeoutMs: number; sinceMs?: number },
  signal?: AbortSignal,
): Promise<AwaitResult> {
  const began = Date.now();
  const found = new Map<number, MessageView>();
  const early: MessageView[] = [];
  let accept: ((m: MessageView) => boolean) | undefined;
  let wake = () => {};
  const take = (m: MessageView) => {
    if (accept?.(m)) found.set(m.seq, m);
  };
  const off = deps.bus.on('chat.message.posted', (e) => {
    if (e.channel !== q.channel) return;
    if (!accept) return void early.push(e.message);
    take(e.message);
    if (found.size >= q.nmsg) wake();
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    const row = await deps.repo.findChannel(q.channel);
    let baseline = 0;
    if (q.sinceMs !== undefined) {
      const since = q.sinceMs;
      const existing = row ? await deps.repo.read(row, { sinceMs: since, limit: MAX_RETURNED, order: 'desc' }) : [];
      if (existing.length >= q.nmsg)
        return { messages: existing.slice(0, q.nmsg).reverse(), waited: false, timed_out: false };
      accept = (m) => Date.parse(m.created_at) >= since;
      existing.forEach(take);
    } else {
      baseline = row?.messageCount ?? 0;
      accept = (m) => m.seq > baseline || Date.parse(m.created_at) >= began;
    }
    early.forEach(take);
    if (found.size < q.nmsg && !signal?.aborted) {
      await new Promise<void>((resolve) => {
        wake = resolve;
        timer = setTimeout(resolve, q.timeoutMs);
        signal?.addEventListener('abort', () => resolve(), { once: true });
      });
    }
    if (found.size < q.nmsg) {
      const channel = row ?? (await deps.repo.findChannel(q.channel));
      const read = (r: { sinceMs?: number; afterSeq?: number }) =>
        channel ? deps.repo.read(channel, { ...r, limit: MAX_RETURNED, order: 'asc' }) : Promise.resolve([]);
      const missed =
        q.sinceMs !== undefined
          ? await read({ sinceMs: q.sinceMs })
          : [...(await read({ afterSeq: baseline })), ...(await read({ sinceMs: began }))];
      missed.forEach(take);
    }
    const messages = [...found.values()].sort((a, b) => a.seq - b.seq).slice(0, MAX_RETURNED);
    return { messages, waited: true, timed_out: messages.length < q.nmsg };
  } finally {
    off();
    clearTimeout(timer);
  }
}
