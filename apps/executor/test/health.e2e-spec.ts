import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  dbTarget,
  postgresAvailable,
  redisAvailable,
  TEST_PG_URL,
  TEST_REDIS_URL,
  type DbTarget,
} from '../../../test/support/databases';
import { startExecutor, type RunningExecutor } from '../../../test/support/executor-process';
import { startTcpProxy, type TcpProxy } from '../../../test/support/tcp-proxy';

interface Ready {
  status: string;
  checks: Record<string, { ok: boolean; error?: string }>;
}
const ready = async (ex: RunningExecutor) => {
  const res = await fetch(`${ex.url}/health/ready`);
  return { status: res.status, body: (await res.json()) as Ready };
};

describe('/health/ready on the default SQLite, in-process config', () => {
  let ex: RunningExecutor;
  beforeAll(async () => {
    ex = await startExecutor({ config: { sessions: { warm_pool: 1 } } });
  });
  afterAll(async () => {
    await ex?.stop();
  });

  it('names the database and the kernel pool, and no Redis when none is configured', async () => {
    const r = await ready(ex);
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('ready');
    expect(r.body.checks).toMatchObject({
      database: { ok: true, kind: 'better-sqlite3' },
      kernel_pool: { ok: true, size: 1 },
    });
    expect(r.body.checks.redis).toBeUndefined();
  });

  it('/health says the environment is ready only because the pool starts kernels', async () => {
    const health = (await (await fetch(`${ex.url}/health`)).json()) as {
      environment_ready: boolean;
      warm_pool: { healthy: boolean };
    };
    expect(health.environment_ready).toBe(health.warm_pool.healthy);
    expect(health.environment_ready).toBe(true);
  });
});

// Both services are reached through a real TCP forwarder that the test cuts to take them down.
describe.runIf(postgresAvailable() && redisAvailable())('/health/ready with PostgreSQL and Redis', () => {
  let ex: RunningExecutor;
  let pg: TcpProxy;
  let redis: TcpProxy;
  let db: DbTarget;
  beforeAll(async () => {
    const pgUrl = new URL(TEST_PG_URL);
    const redisUrl = new URL(TEST_REDIS_URL);
    pg = await startTcpProxy({ host: pgUrl.hostname, port: Number(pgUrl.port || 5432) });
    redis = await startTcpProxy({ host: redisUrl.hostname, port: Number(redisUrl.port || 6379) });
    db = dbTarget('postgres');
    pgUrl.port = String(pg.port);
    redisUrl.port = String(redis.port);
    ex = await startExecutor({
      config: {
        database: { ...db.database, url: pgUrl.toString() },
        jobs: { redis_url: redisUrl.toString() },
        sessions: { warm_pool: 1 },
      },
    });
  });
  afterAll(async () => {
    await ex?.stop();
    await Promise.all([pg?.close(), redis?.close()]);
    await db?.cleanup();
  });

  it('is ready while both answer, and answers 503 naming each one that is down', async () => {
    const up = await ready(ex);
    expect(up.status).toBe(200);
    expect(up.body.checks).toMatchObject({
      database: { ok: true, kind: 'postgres' },
      redis: { ok: true },
      kernel_pool: { ok: true },
    });

    await redis.cut();
    const noRedis = await ready(ex);
    expect(noRedis.status).toBe(503);
    expect(noRedis.body.status).toBe('not_ready');
    expect(noRedis.body.checks.redis).toMatchObject({ ok: false, error: expect.any(String) });
    expect(noRedis.body.checks.database?.ok).toBe(true);

    await pg.cut();
    const neither = await ready(ex);
    expect(neither.status).toBe(503);
    expect(neither.body.checks.database).toMatchObject({ ok: false, error: expect.any(String) });
    expect(neither.body.checks.kernel_pool?.ok).toBe(true);
  });
});
