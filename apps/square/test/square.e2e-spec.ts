import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN } from '../../../test/support/admin';
import { type AppProcess, shutDown } from '../../../test/support/app-process';
import { startSquare } from '../../../test/support/square-process';
import { devToken, v1Client, v2Client, type TestClient } from '../../../test/support/ts-clients';

/** Tools over real MCP clients: the reference's answers, await semantics, board, leases, identity rules. */
describe('square tools over MCP (SQLite)', () => {
  let square: AppProcess;
  let alice: TestClient; // 2026-07-28, stateless
  let bob: TestClient; // 2025 era, sessionful (TS SDK v1)
  let aliceId: string;
  let bobId: string;

  beforeAll(async () => {
    square = await startSquare({ locks: { max_ttl_seconds: 60 } });
    alice = await v2Client(square.mcpUrl, 'auto', devToken('alice'));
    bob = await v1Client(square.mcpUrl, devToken('bob'));
    aliceId = (await alice.call('register', { name: 'alice', role: 'planner', capabilities: ['plan'] })).json
      .agent_id as string;
    bobId = (await bob.call('register', { name: 'bob', role: 'reviewer' })).json.agent_id as string;
  });
  afterAll(() => shutDown(alice, bob, square));

  it('refuses calls before register with the reference’s NOT_AUTHORIZED answer', async () => {
    const carol = await v2Client(square.mcpUrl, 'auto', devToken('carol'));
    const r = await carol.call('chat_post_message', { channel: '#general', content: 'hi' });
    await carol.close();
    expect(r.isError).toBe(true);
    expect(r.json).toMatchObject({
      error: 'NOT_AUTHORIZED',
      message: "Missing or invalid _agent_id for tool 'chat_post_message'.",
      details: { tool: 'chat_post_message' },
    });
    expect(r.json.fix).toContain('register');
  });

  it('re-registering a name returns the same id; another principal cannot take it', async () => {
    expect(
      (await alice.call('register', { name: 'alice', role: 'lead', capabilities: ['plan', 'lead'] })).json.agent_id,
    ).toBe(aliceId);
    const taken = await bob.call('register', { name: 'alice' });
    expect(taken.json).toMatchObject({ error: 'NAME_TAKEN' });
    expect((await alice.call('register', { name: '  ' })).json).toMatchObject({ error: 'VALIDATION_ERROR' });
    const got = await bob.call('get_agent', { agent_id: aliceId });
    expect(got.json.agent).toMatchObject({ id: aliceId, name: 'alice', role: 'lead', status: 'online' });
    expect(got.json.agent).not.toHaveProperty('principal');
    expect((await bob.call('get_agent_by_name', { name: 'nobody' })).json).toEqual({ agent: null });
    const planners = await bob.call('list_agents', { capability: 'plan' });
    expect((planners.json.agents as { id: string }[]).map((a) => a.id)).toEqual([aliceId]);
  });

  it('chat_await_update waits for messages newer than the call, not for ones already there', async () => {
    await alice.call('chat_post_message', { channel: '#await', content: 'old 1' });
    await alice.call('chat_post_message', { channel: '#await', content: 'old 2' });
    const quiet = await bob.call('chat_await_update', { channel: '#await', nmsg: 1, timeout: 0.3 });
    expect(quiet.json).toEqual({ messages: [], waited: true, timed_out: true });
    const waiting = bob.call('chat_await_update', { channel: '#await', nmsg: 2, timeout: 20 });
    await alice.call('chat_post_message', { channel: '#await', content: 'new 1' });
    const reply = await alice.call('chat_post_message', {
      channel: '#await',
      content: 'new 2',
      parent_id: 'orphan-ok',
    });
    const woke = await waiting;
    expect(woke.json).toMatchObject({ waited: true, timed_out: false });
    expect((woke.json.messages as { content: string }[]).map((m) => m.content)).toEqual(['new 1', 'new 2']);
    expect(reply.json).toEqual({ message_id: expect.any(String), channel: '#await', created_at: expect.any(String) });
  });

  it('with since, messages already there count and come back at once (newest nmsg, chronological)', async () => {
    const r = await bob.call('chat_await_update', {
      channel: '#await',
      nmsg: 2,
      timeout: 5,
      since: '2000-01-01T00:00:00Z',
    });
    expect(r.json).toMatchObject({ waited: false, timed_out: false });
    expect((r.json.messages as { content: string }[]).map((m) => m.content)).toEqual(['new 1', 'new 2']);
  });

  it('reads newest first by default (limit 3), oldest first with order asc; unknown channels read as empty', async () => {
    const desc = await bob.call('chat_read_messages', { channel: '#await' });
    expect((desc.json.messages as { content: string }[]).map((m) => m.content)).toEqual(['new 2', 'new 1', 'old 2']);
    const asc = await bob.call('chat_read_messages', { channel: '#await', order: 'asc', limit: 2 });
    expect((asc.json.messages as { content: string }[]).map((m) => m.content)).toEqual(['old 1', 'old 2']);
    expect((await bob.call('chat_read_messages', { channel: '#nowhere' })).json).toEqual({ messages: [] });
    const channels = (await bob.call('chat_list_channels', { prefix: '#aw' })).json.channels as Record<
      string,
      unknown
    >[];
    expect(channels).toEqual([
      expect.objectContaining({ name: '#await', message_count: 4, last_activity_at: expect.any(String) }),
    ]);
    const summary = await bob.call('chat_summarize_channel', { channel: '#await' });
    expect(summary.json).toMatchObject({ message_count: 4, participants: [aliceId] });
    expect((await bob.call('chat_summarize_channel', { channel: '#nowhere' })).json).toMatchObject({
      error: 'CHANNEL_NOT_FOUND',
    });
    expect((await bob.call('chat_post_message', { channel: '', content: 'x' })).json).toMatchObject({
      error: 'VALIDATION_ERROR',
    });
  });

  it('board: versions, optimistic concurrency with the current version, JSON Schema validation', async () => {
    const schema = { type: 'object', properties: { step: { type: 'integer' } }, required: ['step'] };
    expect(
      (await alice.call('board_put', { key: 'plan/now', value: { step: 1 }, expected_version: 0, schema })).json,
    ).toMatchObject({ key: 'plan/now', version: 1 });
    expect(
      (await bob.call('board_put', { key: 'plan/now', value: { step: 2 }, expected_version: 1 })).json,
    ).toMatchObject({ version: 2 });
    const stale = await alice.call('board_put', { key: 'plan/now', value: { step: 3 }, expected_version: 1 });
    expect(stale.json).toMatchObject({ error: 'VERSION_CONFLICT', details: { current_version: 2 } });
    const bad = await alice.call('board_put', { key: 'plan/now', value: { step: 'three' } });
    expect(bad.json).toMatchObject({ error: 'SCHEMA_VIOLATION' });
    const entry = (await bob.call('board_get', { key: 'plan/now' })).json.entry as Record<string, unknown>;
    expect(entry).toMatchObject({ key: 'plan/now', version: 2, value: { step: 2 }, schema, updated_by: bobId });
    const history = (await bob.call('board_history', { key: 'plan/now' })).json.versions as { version: number }[];
    expect(history.map((h) => h.version)).toEqual([2, 1]);
    expect((await bob.call('board_list', { prefix: 'plan/' })).json.entries).toEqual([
      expect.objectContaining({ key: 'plan/now', version: 2 }),
    ]);
  });

  it('locks: exclusive, renewable, fenced; an expired lease is taken over with a higher token', async () => {
    const first = await alice.call('lock_acquire', { name: 'deploy', ttl_seconds: 1.5 });
    expect(first.json).toMatchObject({ acquired: true, renewed: false });
    const token = first.json.fencing_token as number;
    expect((await bob.call('lock_acquire', { name: 'deploy', ttl_seconds: 5 })).json).toMatchObject({
      acquired: false,
      holder: aliceId,
    });
    expect((await bob.call('lock_release', { name: 'deploy' })).json).toMatchObject({ error: 'LOCK_NOT_HELD' });
    // bob waits; alice's lease runs out and bob gets the lock with the next token.
    const taken = await bob.call('lock_acquire', { name: 'deploy', ttl_seconds: 5, wait_seconds: 10 });
    expect(taken.json).toMatchObject({ acquired: true, fencing_token: token + 1 });
    expect((await alice.call('lock_release', { name: 'deploy', fencing_token: token })).json).toMatchObject({
      error: 'LOCK_NOT_HELD',
    });
    expect((await alice.call('list_agents', { status: 'busy' })).json.agents).toEqual([
      expect.objectContaining({ id: bobId }),
    ]);
    const locks = (await alice.call('lock_list', {})).json.locks;
    expect(locks).toEqual([
      expect.objectContaining({ name: 'deploy', holder: bobId, holder_name: 'bob', fencing_token: token + 1 }),
    ]);
    const waiting = alice.call('lock_acquire', { name: 'deploy', ttl_seconds: 5, wait_seconds: 10 });
    expect((await bob.call('lock_release', { name: 'deploy', fencing_token: token + 1 })).json).toEqual({
      released: true,
      name: 'deploy',
    });
    expect((await waiting).json).toMatchObject({ acquired: true, fencing_token: token + 2 });
    await alice.call('lock_release', { name: 'deploy' });
  });

  it('signals reach their addressee once; only its own principal can wait for them', async () => {
    const waiting = bob.call('signal_wait', { kind: 'review', timeout: 10 });
    const sent = await alice.call('signal_send', { to: 'bob', kind: 'review', payload: { pr: 7 } });
    expect(sent.json).toMatchObject({ to: bobId, kind: 'review' });
    expect((await waiting).json).toEqual({
      signals: [
        expect.objectContaining({ id: sent.json.signal_id, from: aliceId, kind: 'review', payload: { pr: 7 } }),
      ],
      timed_out: false,
    });
    expect((await bob.call('signal_wait', { timeout: 0 })).json).toEqual({ signals: [], timed_out: true });
    await alice.call('signal_send', { to: bobId, kind: 'secret', payload: 1 });
    const snoop = await alice.call('signal_wait', { timeout: 0, _agent_id: bobId });
    expect(snoop.json).toMatchObject({ error: 'NOT_AUTHORIZED' });
    expect((await bob.call('signal_wait', { timeout: 0 })).json.signals).toEqual([
      expect.objectContaining({ kind: 'secret' }),
    ]);
  });

  it('another principal cannot post as, or release the lock of, your agent; an unknown id answers the same', async () => {
    await bob.call('lock_acquire', { name: 'mine', ttl_seconds: 30 });
    const spoof = await alice.call('chat_post_message', { channel: '#general', content: 'I am bob', _agent_id: bobId });
    const unknown = await alice.call('chat_post_message', {
      channel: '#general',
      content: 'x',
      _agent_id: 'no-such-agent',
    });
    expect(spoof.json).toEqual(unknown.json);
    expect(spoof.json).toMatchObject({ error: 'NOT_AUTHORIZED' });
    expect((await alice.call('lock_release', { name: 'mine', _agent_id: bobId })).json).toMatchObject({
      error: 'NOT_AUTHORIZED',
    });
    expect((await alice.call('lock_release', { name: 'mine' })).json).toMatchObject({ error: 'LOCK_NOT_HELD' });
    const posts = (await bob.call('chat_read_messages', { channel: '#general', limit: 100 })).json.messages as {
      content: string;
    }[];
    expect(posts.map((m) => m.content)).not.toContain('I am bob');
    await bob.call('lock_release', { name: 'mine' });
  });

  it('one principal may run several agents: _agent_id picks one of its own, and is required then', async () => {
    const dave = await v2Client(square.mcpUrl, 'auto', devToken('dave'));
    await dave.call('register', { name: 'dave' });
    const second = (await dave.call('register', { name: 'dave-helper' })).json.agent_id as string;
    const ambiguous = await dave.call('chat_post_message', { channel: '#team', content: 'who am I?' });
    expect(ambiguous.json).toMatchObject({ error: 'NOT_AUTHORIZED' });
    expect(ambiguous.json.fix).toContain(second);
    await dave.call('chat_post_message', { channel: '#team', content: 'helper here', _agent_id: second });
    await dave.close();
    const [m] = (await bob.call('chat_read_messages', { channel: '#team', limit: 1 })).json.messages as {
      agent_id: string;
    }[];
    expect(m?.agent_id).toBe(second);
  });

  it('admin API: agents with principals, the audit of every call, kick (locks released), release', async () => {
    const agents = (await (await fetch(`${square.url}/admin/v1/square/agents`, { headers: ADMIN })).json()) as {
      agents: { id: string; principal: string }[];
    };
    expect(agents.agents.find((a) => a.id === bobId)?.principal).toBe('bob@tenant-a');
    expect((await fetch(`${square.url}/admin/v1/square/agents`)).status).toBe(403);
    const audit = (await (
      await fetch(`${square.url}/admin/v1/square/audit?principal=alice@tenant-a&limit=1000`, { headers: ADMIN })
    ).json()) as {
      records: { tool: string; outcome: string; upstream: string }[];
    };
    expect(audit.records.some((r) => r.tool === 'chat_post_message' && r.outcome === 'denied')).toBe(true);
    expect(audit.records.some((r) => r.tool === 'board_put' && r.outcome === 'ok')).toBe(true);
    await bob.call('lock_acquire', { name: 'held-by-bob', ttl_seconds: 30 });
    const kick = await fetch(`${square.url}/admin/v1/square/agents/${bobId}/kick`, { method: 'POST', headers: ADMIN });
    expect(kick.status).toBe(201);
    const left = await alice.call('chat_await_update', {
      channel: '#general',
      nmsg: 1,
      timeout: 10,
      since: new Date(Date.now() - 5000).toISOString(),
    });
    expect((left.json.messages as { content: string }[]).some((m) => m.content.includes(`\`${bobId}\` left`))).toBe(
      true,
    );
    const afterKick = await fetch(`${square.url}/admin/v1/square/locks`, { headers: ADMIN });
    expect(((await afterKick.json()) as { locks: unknown[] }).locks).toEqual([]);
    const docs = await fetch(`${square.url}/admin/docs/json`, { headers: ADMIN });
    expect(Object.keys(((await docs.json()) as { paths: Record<string, unknown> }).paths)).toContain(
      '/admin/v1/square/agents/{id}/kick',
    );
  });
});

describe('square limits and presence', () => {
  let square: AppProcess;
  let alice: TestClient;
  let bob: TestClient;

  beforeAll(async () => {
    square = await startSquare({
      chat: { max_message_length: 50, max_channels: 2, max_messages_per_minute: 5 },
      presence: { offline_after_seconds: 1, sweep_interval_seconds: 1 },
    });
    alice = await v2Client(square.mcpUrl, 'auto', devToken('alice'));
    bob = await v2Client(square.mcpUrl, 'legacy', devToken('bob'));
    await alice.call('register', { name: 'alice' });
    await bob.call('register', { name: 'bob' });
  });
  afterAll(() => shutDown(alice, bob, square));

  it('refuses long messages, channels past max_channels and posts past the rate with clear errors', async () => {
    const long = await alice.call('chat_post_message', { channel: '#a', content: 'x'.repeat(51) });
    expect(long.json).toMatchObject({ error: 'VALIDATION_ERROR', details: { max_message_length: 50 } });
    // #general exists (welcomes), so one more channel fills the square.
    await alice.call('chat_post_message', { channel: '#a', content: 'ok' });
    const third = await alice.call('chat_post_message', { channel: '#b', content: 'ok' });
    expect(third.json).toMatchObject({ error: 'CHANNEL_LIMIT', details: { max_channels: 2 } });
    // 5 posts a minute: 'ok' and the refused '#b' post took two (refused content costs nothing).
    const answers = [];
    for (let i = 0; i < 4; i++)
      answers.push((await alice.call('chat_post_message', { channel: '#a', content: `n${i}` })).json);
    expect(answers.map((a) => a.error ?? 'ok')).toEqual(['ok', 'ok', 'ok', 'RESOURCE_LIMIT']);
    expect(answers.at(-1)).toMatchObject({ details: { retry_after: expect.any(Number) } });
  });

  /** Waits (chat_await_update with since, one more message each round, none missed) for a matching message. */
  async function awaitMessage(
    client: TestClient,
    channel: string,
    match: (content: string) => boolean,
  ): Promise<string> {
    const since = new Date(Date.now() - 1000).toISOString();
    for (let n = 1; n < 50; n++) {
      const r = await client.call('chat_await_update', { channel, nmsg: n, timeout: 20, since });
      const hit = (r.json.messages as { content: string }[]).find((m) => match(m.content));
      if (hit) return hit.content;
      if (r.json.timed_out) break;
    }
    throw new Error(`no matching message in ${channel}`);
  }

  it('a silent agent goes offline: departure announced, agent.disconnected releases its locks', async () => {
    const carol = await v2Client(square.mcpUrl, 'auto', devToken('carol'));
    const carolId = (await carol.call('register', { name: 'carol' })).json.agent_id as string;
    expect((await carol.call('lock_acquire', { name: 'carols', ttl_seconds: 60 })).json).toMatchObject({
      acquired: true,
    });
    await carol.close();
    // bob stays online while he waits (a waiting agent is alive) and is woken by the departure.
    const left = await awaitMessage(bob, '#general', (c) => c.includes(`\`${carolId}\` left`));
    expect(left).toContain('silent');
    const carolNow = (await bob.call('get_agent', { agent_id: carolId })).json.agent as { status: string };
    expect(carolNow.status).toBe('offline');
    expect((await bob.call('lock_list', {})).json.locks).toEqual([]);
    expect(((await bob.call('get_agent_by_name', { name: 'bob' })).json.agent as { status: string }).status).toBe(
      'online',
    );
  });
});
