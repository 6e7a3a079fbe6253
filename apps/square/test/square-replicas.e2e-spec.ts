import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN } from '../../../test/support/admin';
import { type AppProcess, shutDown } from '../../../test/support/app-process';
import { until } from '../../../test/support/router-process';
import {
  dbTarget,
  postgresAvailable,
  redisAvailable,
  TEST_REDIS_URL,
  type DbTarget,
} from '../../../test/support/databases';
import { startSquare } from '../../../test/support/square-process';
import { devToken, v2Client, type TestClient } from '../../../test/support/ts-clients';

const services = postgresAvailable() && redisAvailable();

/** Two square processes sharing one PostgreSQL database and one Redis: one square. */
describe.runIf(services)('two square replicas over Redis and PostgreSQL', () => {
  let db: DbTarget;
  let a: AppProcess;
  let b: AppProcess;
  const clients: TestClient[] = [];

  const client = async (url: string, who: string) => {
    const c = await v2Client(url, 'auto', devToken(who));
    clients.push(c);
    await c.call('register', { name: who });
    return c;
  };

  beforeAll(async () => {
    db = dbTarget('postgres');
    // A name of its own per run: Redis channels and keys never meet another run's.
    const config = { name: `sq${randomBytes(4).toString('hex')}`, database: db.database, redis_url: TEST_REDIS_URL };
    a = await startSquare(config);
    b = await startSquare(config);
  });
  afterAll(async () => {
    await shutDown(...clients, a, b);
    await db?.cleanup();
  });

  it('a post on replica A wakes a chat_await_update on replica B within 50 ms', async () => {
    const poster = await client(a.mcpUrl, 'poster');
    const waiter = await client(b.mcpUrl, 'waiter');
    const lags: number[] = [];
    for (let i = 0; i < 10; i++) {
      const waiting = waiter
        .call('chat_await_update', { channel: '#wake', nmsg: 1, timeout: 10 })
        .then((r) => ({ r, at: performance.now() }));
      // Post on A once B reports the wait.
      await until('the wait on B', async () => {
        const w = (await (await fetch(`${b.url}/admin/v1/square/waiters`, { headers: ADMIN })).json()) as {
          waiters: Record<string, number>;
        };
        return w.waiters['#wake'] ? true : undefined;
      });
      const sent = performance.now();
      const posted = await poster.call('chat_post_message', { channel: '#wake', content: `ping ${i}` });
      const { r, at } = await waiting;
      expect((r.json.messages as { id: string }[]).map((m) => m.id)).toEqual([posted.json.message_id]);
      lags.push(at - sent);
    }
    lags.sort((x, y) => x - y);
    console.log(`cross-replica wake after post (ms): ${lags.map((l) => l.toFixed(1)).join(' ')}`);
    expect(lags[Math.floor(lags.length / 2)]).toBeLessThan(50);
  });

  it('a lock is exclusive across replicas under contention: never two holders, tokens only grow', async () => {
    const workers = await Promise.all(
      Array.from({ length: 6 }, (_, i) => client(i % 2 ? b.mcpUrl : a.mcpUrl, `worker${i}`)),
    );
    const rounds = 4;
    await Promise.all(
      workers.map(async (w, i) => {
        for (let r = 0; r < rounds; r++) {
          const got = await w.call('lock_acquire', { name: 'critical', ttl_seconds: 30, wait_seconds: 60 });
          expect(got.json).toMatchObject({ acquired: true });
          const token = got.json.fencing_token as number;
          await w.call('chat_post_message', { channel: '#critical', content: `enter ${token} ${i}` });
          await w.call('chat_post_message', { channel: '#critical', content: `exit ${token} ${i}` });
          expect((await w.call('lock_release', { name: 'critical', fencing_token: token })).json).toMatchObject({
            released: true,
          });
        }
      }),
    );
    const log = (await workers[0]!.call('chat_read_messages', { channel: '#critical', limit: 1000, order: 'asc' })).json
      .messages as { content: string }[];
    expect(log).toHaveLength(workers.length * rounds * 2);
    let last = 0;
    for (let k = 0; k < log.length; k += 2) {
      const [enter, exit] = [log[k]!.content.split(' '), log[k + 1]!.content.split(' ')];
      // Each enter is followed by the same holder's exit: nobody entered in between.
      expect(enter[0]).toBe('enter');
      expect(exit).toEqual(['exit', enter[1], enter[2]]);
      expect(Number(enter[1])).toBeGreaterThan(last);
      last = Number(enter[1]);
    }
  });

  it('an agent registered on A is the same agent on B, and B refuses a spoofed _agent_id from another principal', async () => {
    const onA = await client(a.mcpUrl, 'shared');
    const id = ((await onA.call('get_agent_by_name', { name: 'shared' })).json.agent as { id: string }).id;
    const sameOnB = await v2Client(b.mcpUrl, 'auto', devToken('shared'));
    clients.push(sameOnB);
    expect((await sameOnB.call('chat_post_message', { channel: '#x', content: 'from B' })).isError).toBe(false);
    const other = await client(b.mcpUrl, 'intruder');
    expect(
      (await other.call('chat_post_message', { channel: '#x', content: 'as shared', _agent_id: id })).json,
    ).toMatchObject({ error: 'NOT_AUTHORIZED' });
    const [m] = (await onA.call('chat_read_messages', { channel: '#x', limit: 1 })).json.messages as {
      agent_id: string;
      content: string;
    }[];
    expect(m).toMatchObject({ agent_id: id, content: 'from B' });
  });
});
