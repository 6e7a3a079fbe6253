import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventBus } from '../bus/event-bus';
import { COORDINATION_ENTITIES, ChannelEntity, MessageEntity } from '../coordination.entities';
import { COORDINATION_MIGRATIONS } from '../coordination.migrations';
import { Transactions } from '../coordination.tx';
import { type ChannelRef, ChatRepository } from './chat.repository';
import { waitForMessages } from './chat-await';

describe('waitForMessages (a real SQLite database and the in-process bus)', () => {
  let ds: DataSource;
  let repo: ChatRepository;
  const bus = new EventBus('replica-a', 'spec');

  beforeAll(async () => {
    ds = await new DataSource({
      type: 'better-sqlite3',
      database: ':memory:',
      entities: COORDINATION_ENTITIES,
      migrations: COORDINATION_MIGRATIONS,
      migrationsRun: true,
    }).initialize();
    repo = new ChatRepository(ds.getRepository(ChannelEntity), ds.getRepository(MessageEntity), new Transactions(ds));
  });
  afterAll(() => ds.destroy());

  const post = async (channel: ChannelRef, content: string) => {
    const message = await repo.append(channel, { agentId: 'poster', parentId: null, contentType: 'text', content });
    bus.publish({
      type: 'chat.message.posted',
      channel: channel.name,
      agent_id: 'poster',
      message_id: message.id,
      message,
    });
    return message;
  };

  it('counts a post committed while the wait was still reading where the channel stands (it is newer than the call)', async () => {
    const channel = await repo.ensureChannel('#race', null);
    await post(channel, 'before the call');
    // The wait reads the channel only after a post has committed and been published: the baseline includes it.
    const lateRead = Object.create(repo) as ChatRepository;
    let posted: Promise<unknown> | undefined;
    lateRead.findChannel = async (name) => {
      await (posted ??= post(channel, 'during the call'));
      return repo.findChannel(name);
    };
    const started = performance.now();
    const r = await waitForMessages({ bus, repo: lateRead }, { channel: '#race', nmsg: 1, timeoutMs: 5_000 });
    expect(r.timed_out).toBe(false);
    expect(r.messages.map((m) => m.content)).toEqual(['during the call']);
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it('never counts messages from before the call, and finds a missed event on timeout by re-reading', async () => {
    const channel = await repo.ensureChannel('#old', null);
    await post(channel, 'old 1');
    const last = await post(channel, 'old 2');
    await nextMillisecond(Date.parse(last.created_at)); // a post in the call's own millisecond counts as newer
    const quiet = await waitForMessages({ bus, repo }, { channel: '#old', nmsg: 1, timeoutMs: 100 });
    expect(quiet).toEqual({ messages: [], waited: true, timed_out: true });
    // A post whose event never arrives (lost pub/sub message) is found by the re-read at the timeout.
    const waiting = waitForMessages({ bus, repo }, { channel: '#old', nmsg: 1, timeoutMs: 300 });
    await repo.append(channel, { agentId: 'poster', parentId: null, contentType: 'text', content: 'no event' });
    const r = await waiting;
    expect(r.messages.map((m) => m.content)).toEqual(['no event']);
  });
});

async function nextMillisecond(after: number): Promise<void> {
  while (Date.now() <= after) await new Promise((r) => setImmediate(r));
}
