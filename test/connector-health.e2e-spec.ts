import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisAvailable, TEST_REDIS_URL } from './support/databases';
import { startExecutor, type RunningExecutor } from './support/executor-process';
import { freePort } from './support/ports';
import { startDispatcher, startGateway, startRouter, type RunningRouter } from './support/router-process';

/** `/health/ready` of the connectors: every dependency by name, 503 as soon as one of them is down. */
interface Ready {
  status: string;
  checks: Record<string, { ok: boolean; error?: string } & Record<string, unknown>>;
  message?: string;
}
const ready = async (c: RunningRouter) => {
  const res = await fetch(`${c.url}/health/ready`);
  return { code: res.status, body: (await res.json()) as Ready };
};

describe('connector readiness names each dependency and answers 503 when one is down (real processes)', () => {
  let up: RunningExecutor;
  let down: string;
  const started: RunningRouter[] = [];
  const start = async (p: Promise<RunningRouter>) => {
    const c = await p;
    started.push(c);
    return c;
  };

  beforeAll(async () => {
    up = await startExecutor({ config: { sessions: { warm_pool: 0 } } });
    down = `http://127.0.0.1:${await freePort()}`;
  });
  afterAll(async () => {
    await Promise.all(started.map((c) => c.stop()));
    await up?.stop();
  });

  it('a router with one of two upstreams down answers 503, naming the down one with its error and the up one as ok', async () => {
    const router = await start(
      startRouter({
        upstreams: [
          { name: 'up', url: up.url },
          { name: 'gone', url: down },
        ],
      }),
    );
    const { code, body } = await ready(router);
    expect(code).toBe(503);
    expect(body.status).toBe('not_ready');
    expect(body.checks.upstreams).toMatchObject({
      up: { ok: true },
      gone: { ok: false, error: expect.stringMatching(/ECONNREFUSED|connect/i) },
    });
    expect(body.message).toContain('upstreams.gone');
  });

  it('a dispatcher with a dead worker answers 503 naming that worker', async () => {
    const dispatcher = await start(
      startDispatcher({
        workers: [
          { name: 'w1', url: up.url },
          { name: 'w2', url: down },
        ],
      }),
    );
    const { code, body } = await ready(dispatcher);
    expect(code).toBe(503);
    expect(body.checks.workers).toMatchObject({ w1: { ok: true }, w2: { ok: false } });
  });

  it('a gateway whose configured Redis is unreachable answers 503 naming redis, with its database and upstream ok', async () => {
    const gateway = await start(
      startGateway({ upstream: { name: 'demo', url: up.url }, redis_url: `redis://127.0.0.1:${await freePort()}` }),
    );
    const { code, body } = await ready(gateway);
    expect(code).toBe(503);
    expect(body.checks).toMatchObject({
      database: { ok: true, kind: 'better-sqlite3' },
      redis: { ok: false, error: expect.any(String) },
      upstreams: { demo: { ok: true } },
    });
  });

  // redisAvailable() throws under STOA_REQUIRE_SERVICES=1 when Redis is missing, and says why it skips otherwise.
  describe.runIf(redisAvailable())('with Redis running', () => {
    it('a gateway with its database, Redis and upstream up is ready, naming all three', async () => {
      const gateway = await start(startGateway({ upstream: { name: 'demo', url: up.url }, redis_url: TEST_REDIS_URL }));
      const { code, body } = await ready(gateway);
      expect(code).toBe(200);
      expect(body).toMatchObject({
        status: 'ready',
        checks: { database: { ok: true }, redis: { ok: true }, upstreams: { demo: { ok: true } } },
      });
    });
  });
});
