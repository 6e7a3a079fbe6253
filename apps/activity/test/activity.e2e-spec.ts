import { spawnSync } from 'node:child_process';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStream, startActivity, TEST_WRITER_SECRET, type RunningActivity } from '../../../test/support/activity';
import { TestOidcIssuer } from '../../../test/support/oidc-issuer';
import { ACTIVITY_MAIN } from '../../../test/support/paths';
import { devToken } from '../../../test/support/ts-clients';

// A 1×1 PNG.
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const ALICE = 'alice@tenant-a';
const BOB = 'bob@tenant-a';

function event(over: Record<string, unknown> = {}): Record<string, unknown> {
  return { type: 'code_executed', server: 'demo', description: 'test', success: true, user: ALICE, ...over };
}

async function recent(app: RunningActivity, cookie: string): Promise<Record<string, unknown>[]> {
  const res = await fetch(`${app.url}/events/recent`, { headers: { cookie } });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>[];
}

describe('activity app: ingest, stream, store (no-op auth, SQLite)', () => {
  let app: RunningActivity;
  let admin: string;
  beforeAll(async () => {
    app = await startActivity({
      sweep_interval_seconds: 1,
      ingest: { max_event_bytes: 50_000 },
      stream: { heartbeat_seconds: 1 }, // pings on an idle stream within the test's time
    });
    admin = await app.cookie(undefined, true);
  });
  afterAll(async () => {
    await app?.stop();
  });

  it('refuses a writer without the shared secret, and one with the wrong secret', async () => {
    const none = await app.post({ events: [event()] }, null);
    expect(none.status).toBe(401);
    expect(((await none.json()) as { error_description: string }).error_description).toContain('ACTIVITY_UI_SECRET');
    const wrong = await app.post({ events: [event()] }, 'Bearer not-the-secret-at-all');
    expect(wrong.status).toBe(401);
    const right = await app.post({ events: [event({ description: 'accepted write' })] });
    expect(await right.json()).toEqual({ status: 'ok', stored: 1 });
  });

  it('refuses a batch with one bad event, says which field, and stores none of it', async () => {
    const res = await app.post({
      events: [event({ description: 'half-batch-good' }), { type: 'nope', server: 'demo' }],
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error_description: string };
    expect(body.error_description).toContain('events[1].type');
    expect((await recent(app, admin)).some((e) => e.description === 'half-batch-good')).toBe(false);
  });

  it('refuses an oversized event with 413 and the limit', async () => {
    const res = await app.post({ events: [event({ stdout: 'x'.repeat(60_000) })] });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error_description: string }).error_description).toContain('ingest.max_event_bytes');
  });

  it('replays the recent window, streams live events, and resumes after Last-Event-ID', async () => {
    const tag = `replay-${Date.now()}`;
    await app.post({ events: [1, 2, 3].map((i) => event({ session_id: tag, description: `${tag}-${i}` })) });
    const cookie = await app.cookie(devToken('alice'));
    const first = await openStream(`${app.url}/stream`, { cookie });
    await first.waitFor((es) => es.some((e) => e.event === 'replayed'));
    const mine = () => first.activity().filter((e) => e.session_id === tag);
    expect(mine().map((e) => e.description)).toEqual([`${tag}-1`, `${tag}-2`, `${tag}-3`]);
    await app.post({ events: [event({ session_id: tag, description: `${tag}-live` })] });
    await first.waitFor(() => mine().length === 4);
    const lastSeen = mine()[3]!.id;
    first.close();
    await app.post({ events: [4, 5].map((i) => event({ session_id: tag, description: `${tag}-${i}` })) });
    const resumed = await openStream(`${app.url}/stream`, { cookie, 'last-event-id': lastSeen });
    await resumed.waitFor((es) => es.some((e) => e.event === 'replayed'));
    expect(resumed.activity().map((e) => e.description)).toEqual([`${tag}-4`, `${tag}-5`]);
    resumed.close();
  });

  it("shows each user their own sessions and figures, and the admin everyone's", async () => {
    const tag = `own-${Date.now()}`;
    const figure = { mime_type: 'image/png', data: PNG, metadata: {} };
    await app.post({
      events: [
        event({ user: ALICE, session_id: `${tag}-a`, description: tag, displays: [figure] }),
        event({ user: BOB, session_id: `${tag}-b`, description: tag, displays: [figure] }),
        event({ user: null, session_id: `${tag}-none`, description: tag }),
      ],
    });
    const alice = await app.cookie(devToken('alice'));
    const bob = await app.cookie(devToken('bob'));
    const seen = async (cookie: string) =>
      (await recent(app, cookie)).filter((e) => e.description === tag).map((e) => e.session_id);
    expect(await seen(alice)).toEqual([`${tag}-a`]);
    expect(await seen(bob)).toEqual([`${tag}-b`]);
    expect(await seen(admin)).toEqual([`${tag}-a`, `${tag}-b`, `${tag}-none`]);
    const [bobs] = (await recent(app, bob)).filter((e) => e.description === tag) as {
      displays: { figure: string }[];
    }[];
    const figUrl = `${app.url}/figures/${bobs!.displays[0]!.figure}`;
    const asBob = await fetch(figUrl, { headers: { cookie: bob } });
    expect(asBob.status).toBe(200);
    expect(asBob.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await asBob.arrayBuffer()).equals(Buffer.from(PNG, 'base64'))).toBe(true);
    // Someone else's figure answers like a missing one.
    const asAlice = await fetch(figUrl, { headers: { cookie: alice } });
    const missing = await fetch(`${app.url}/figures/${'0'.repeat(64)}`, { headers: { cookie: alice } });
    expect([asAlice.status, missing.status]).toEqual([404, 404]);
    expect(((await asAlice.json()) as { error: string }).error).toBe(
      ((await missing.json()) as { error: string }).error,
    );
  });

  it('stores a figure shown twice once, and serves it to the owner', async () => {
    const tag = `twice-${Date.now()}`;
    const svg = { mime_type: 'image/svg+xml', data: `<svg xmlns="http://www.w3.org/2000/svg"><!--${tag}--></svg>` };
    await app.post({
      events: [event({ description: tag, displays: [svg] }), event({ description: tag, displays: [svg] })],
    });
    const refs = (await recent(app, admin))
      .filter((e) => e.description === tag)
      .map((e) => (e.displays as { figure: string }[])[0]!.figure);
    expect(refs).toHaveLength(2);
    expect(refs[0]).toBe(refs[1]);
    const res = await fetch(`${app.url}/figures/${refs[0]}`, { headers: { cookie: admin } });
    expect(res.headers.get('content-security-policy')).toContain('sandbox');
    expect(await res.text()).toBe(svg.data);
  });

  it('sends heartbeat pings on an idle stream, every stream.heartbeat_seconds', async () => {
    const cookie = await app.cookie(devToken('carol')); // carol has no events: nothing but pings will come
    const stream = await openStream(`${app.url}/stream`, { cookie });
    try {
      await stream.waitFor((es) => es.some((e) => e.event === 'replayed'));
      const after = stream.events.length;
      const at: number[] = [];
      await stream.waitFor((es) => {
        while (at.length < es.slice(after).filter((e) => e.event === 'ping').length) at.push(performance.now());
        return at.length >= 2;
      }, 5000);
      expect(stream.events.slice(after).map((e) => e.event)).toEqual(['ping', 'ping']);
      expect(stream.events.at(-1)?.data).toBe('');
      // One interval apart (1 s here; setInterval never fires early).
      expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(900);
    } finally {
      stream.close();
    }
  });

  it('refuses stream access without a stream token', async () => {
    const res = await fetch(`${app.url}/stream`);
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error_description: string }).error_description).toContain('stream-token');
  });

  it('deletes events past retention and keeps recent ones', async () => {
    const tag = `retention-${Date.now()}`;
    const twoDaysAgo = Date.now() / 1000 - 2 * 86_400;
    await app.post({
      events: [event({ description: `${tag}-old`, timestamp: twoDaysAgo }), event({ description: `${tag}-new` })],
    });
    const admin2 = await app.cookie(undefined, true);
    const deadline = Date.now() + 10_000;
    let descriptions: unknown[] = [];
    // The sweep runs every second: poll the store's answer until the old event is gone.
    while (Date.now() < deadline) {
      const rows = await fetch(`${app.url}/events/recent`, { headers: { cookie: admin2 } });
      descriptions = ((await rows.json()) as { description: string }[]).map((e) => e.description);
      if (!descriptions.includes(`${tag}-old`)) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(descriptions).toContain(`${tag}-new`);
    expect(descriptions).not.toContain(`${tag}-old`);
  });

  it('drops a stream client that stops reading, while a reading client gets every event', async () => {
    const cookie = await app.cookie(devToken('alice'));
    const reader = await openStream(`${app.url}/stream`, { cookie });
    await reader.waitFor((es) => es.some((e) => e.event === 'replayed'));
    // A raw connection that never reads its socket.
    const stalled = connect(app.port, '127.0.0.1');
    stalled.write(`GET /stream HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: ${cookie}\r\n\r\n`);
    stalled.pause();
    const closed = new Promise<void>((resolve) => stalled.once('close', () => resolve()));
    await waitForClients(app, 2);
    const tag = `flood-${Date.now()}`;
    const big = 'y'.repeat(40_000);
    for (let i = 0; i < 40; i++)
      await app.post({ events: Array.from({ length: 10 }, () => event({ description: tag, stdout: big })) });
    await reader.waitFor(() => reader.activity().filter((e) => e.description === tag).length === 400, 30_000);
    await waitForClients(app, 1);
    stalled.destroy();
    await closed;
    reader.close();
  });
});

async function waitForClients(app: RunningActivity, n: number): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const h = (await (await fetch(`${app.url}/health`)).json()) as { stream_clients: number };
    if (h.stream_clients === n) return;
    if (Date.now() > deadline) throw new Error(`stream_clients stayed ${h.stream_clients}, expected ${n}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('activity app start-up', () => {
  it('refuses to start in no-op mode without a writer secret, naming the variable', () => {
    const res = spawnSync(process.execPath, [ACTIVITY_MAIN, '--port', '0'], {
      env: { ...process.env, ACTIVITY_UI_SECRET: '', STOA_DATA_DIR: '/tmp/stoa-activity-refused' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(res.status).toBe(2);
    expect(res.stderr).toContain('ACTIVITY_UI_SECRET');
  });
});

describe('activity app with Entra ID writers', () => {
  let idp: TestOidcIssuer;
  let app: RunningActivity;
  beforeAll(async () => {
    idp = await TestOidcIssuer.start();
    app = await startActivity(
      { auth: { tenant_id: idp.tenant, client_id: idp.clientId, authority: idp.authority } },
      { NODE_EXTRA_CA_CERTS: idp.caFile, ACTIVITY_UI_SECRET: '' },
    );
  });
  afterAll(async () => {
    await app?.stop();
    await idp?.close();
  });

  it('accepts a token with the writer role, refuses one without it, and refuses no token', async () => {
    const body = { events: [event()] };
    const none = await app.post(body, null);
    expect(none.status).toBe(401);
    const noRole = await app.post(body, `Bearer ${await idp.token({ oid: 'svc' })}`);
    expect(noRole.status).toBe(403);
    expect(((await noRole.json()) as { error_description: string }).error_description).toContain(
      'Missing required role: ActivityEventWriter',
    );
    const secret = await app.post(body, `Bearer ${TEST_WRITER_SECRET}`);
    expect(secret.status).toBe(401);
    const writer = await app.post(body, `Bearer ${await idp.token({ oid: 'svc', roles: ['ActivityEventWriter'] })}`);
    expect(writer.status).toBe(200);
  });

  it("gives a reader with the admin role everyone's events and a plain user only their own", async () => {
    const tag = `entra-${Date.now()}`;
    const writer = `Bearer ${await idp.token({ oid: 'svc', roles: ['ActivityEventWriter'] })}`;
    await app.post(
      {
        events: [
          event({ user: `u1@${idp.tenant}`, description: tag }),
          event({ user: `u2@${idp.tenant}`, description: tag }),
        ],
      },
      writer,
    );
    const mint = async (token: string) => {
      const res = await fetch(`${app.url}/stream-token`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}` },
      });
      return (res.headers.get('set-cookie') ?? '').split(';')[0] as string;
    };
    const user = await mint(await idp.token({ oid: 'u1' }));
    const admin = await mint(await idp.token({ oid: 'boss', roles: ['Stoa.Admin'] }));
    const users = async (cookie: string) =>
      (await recent(app, cookie)).filter((e) => e.description === tag).map((e) => e.user);
    expect(await users(user)).toEqual([`u1@${idp.tenant}`]);
    expect(await users(admin)).toEqual([`u1@${idp.tenant}`, `u2@${idp.tenant}`]);
  });
});
