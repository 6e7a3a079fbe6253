import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStream, startActivity, type RunningActivity, type SseReader } from '../../../test/support/activity';
import { dbTarget, postgresAvailable, redisAvailable, TEST_REDIS_URL } from '../../../test/support/databases';
import { devToken } from '../../../test/support/ts-clients';

const event = (description: string) => ({
  type: 'code_executed',
  server: 'demo',
  description,
  success: true,
  user: 'alice@tenant-a',
});

// redisAvailable()/postgresAvailable() throw under STOA_REQUIRE_SERVICES=1 when a service is missing.
describe.runIf(redisAvailable() && postgresAvailable())('two activity replicas behind one database and Redis', () => {
  const db = dbTarget('postgres');
  let a: RunningActivity;
  let b: RunningActivity;
  const streams: SseReader[] = [];
  beforeAll(async () => {
    const shared = {
      name: `replicas-${Date.now()}`,
      database: db.database,
      redis_url: TEST_REDIS_URL,
      stream: { token_secret: 'shared-stream-secret-0123456789abcdef' },
    };
    a = await startActivity(shared);
    b = await startActivity(shared);
  });
  afterAll(async () => {
    for (const s of streams) s.close();
    await a?.stop();
    await b?.stop();
    await db.cleanup();
  });

  /** A stream on `app` that has finished its replay: what it gets next is live. */
  async function liveStream(app: RunningActivity, cookie: string): Promise<SseReader> {
    const s = await openStream(`${app.url}/stream`, { cookie });
    streams.push(s);
    await s.waitFor((es) => es.some((e) => e.event === 'replayed'));
    return s;
  }

  it('streams an event posted to either replica live on the other, with a token minted by one of them', async () => {
    const cookie = await a.cookie(devToken('alice'));
    const [onA, onB] = [await liveStream(a, cookie), await liveStream(b, cookie)];
    const tag = `replica-${Date.now()}`;
    const seen = (s: SseReader, d: string) => () => s.activity().some((e) => e.description === d);
    // A → B, then B → A: each direction goes through Redis (an in-process hub would reach only its own clients).
    await a.post({ events: [event(`${tag}-from-a`)] });
    await onB.waitFor(seen(onB, `${tag}-from-a`));
    await b.post({ events: [event(`${tag}-from-b`)] });
    await onA.waitFor(seen(onA, `${tag}-from-b`));
    // Each replica's own clients get its events too, once.
    await onA.waitFor(seen(onA, `${tag}-from-a`));
    await onB.waitFor(seen(onB, `${tag}-from-b`));
    for (const s of [onA, onB])
      expect(
        s
          .activity()
          .filter((e) => String(e.description).startsWith(tag))
          .map((e) => e.description)
          .sort(),
      ).toEqual([`${tag}-from-a`, `${tag}-from-b`]);
  });

  it('shares the store: a replica replays what was posted to the other', async () => {
    const tag = `stored-${Date.now()}`;
    await b.post({ events: [event(tag)] });
    const cookie = await b.cookie(devToken('alice'));
    const res = await fetch(`${a.url}/events/recent`, { headers: { cookie } });
    const recent = (await res.json()) as { description: string }[];
    expect(recent.some((e) => e.description === tag)).toBe(true);
  });
});
