import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startExecutor, type RunningExecutor } from './support/executor-process';
import { pyCalls } from './support/py-client';
import { startDispatcher, startGateway, startRouter, type RunningRouter } from './support/router-process';
import { devToken, v2Client, type TestClient } from './support/ts-clients';
import { ADMIN } from './support/admin';

/**
 * Connectors configured as the seed docs write them — upstreams/workers with a name and a URL, no `auth` — carry
 * each caller's identity to the executors: two users can neither resume nor list each other's sessions.
 */
const KEY = 'identity-test-key-0123456789abcdef';
const worker = (replica: string) =>
  startExecutor({ config: { sessions: { replica, id_signing_key: KEY, warm_pool: 1, max_sessions: 100 } } });
/** An answer with every session id in it replaced, so answers about different ids compare. */
const withoutIds = (text: string, ...ids: string[]) => ids.reduce((t, id) => t.split(id).join('<id>'), text);

describe('connectors without an auth block keep callers apart upstream (real processes, TS and Python clients)', () => {
  const workers: RunningExecutor[] = [];
  const connectors: Record<'router' | 'gateway' | 'dispatcher', RunningRouter> = {} as never;
  const clients: TestClient[] = [];

  beforeAll(async () => {
    workers.push(...(await Promise.all(['replica-a', 'replica-b'].map(worker))));
    const [a, b] = workers as [RunningExecutor, RunningExecutor];
    [connectors.router, connectors.gateway, connectors.dispatcher] = await Promise.all([
      startRouter({ upstreams: [{ name: 'demo', url: a.mcpUrl }] }),
      startGateway({ upstream: { name: 'demo', url: a.url } }),
      startDispatcher({
        workers: [
          { name: 'w1', url: a.url },
          { name: 'w2', url: b.url },
        ],
        session_key: KEY,
      }),
    ]);
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await Promise.all(Object.values(connectors).map((c) => c?.stop()));
    await Promise.all(workers.map((w) => w.stop()));
  });

  const client = async (url: string, who: string) => {
    const c = await v2Client(url, 'auto', devToken(who));
    clients.push(c);
    return c;
  };

  for (const kind of ['router', 'gateway', 'dispatcher'] as const) {
    it(`through the ${kind}, a second user (Python mcp client) resuming the first user's session gets the unknown-id answer and does not see it listed`, async () => {
      const connector = connectors[kind];
      const alice = await client(connector.mcpUrl, `alice-${kind}`);
      const mine = await alice.call('execute_demo_code', { code: 'w = 5' });
      const sid = String(mine.json.session_id);
      expect(sid).toMatch(/^s-/);
      expect(JSON.stringify((await alice.call('demo_list_sessions', {})).json)).toContain(sid);

      const unknown = `s-${randomBytes(12).toString('hex')}`;
      const [stolen, invented, listed] = await pyCalls(
        connector.mcpUrl,
        'auto',
        [
          { tool: 'execute_demo_code', args: { code: 'w', execution_session_id: sid } },
          { tool: 'execute_demo_code', args: { code: 'w', execution_session_id: unknown } },
          { tool: 'demo_list_sessions', args: {} },
        ],
        { token: devToken(`bob-${kind}`) },
      );
      expect(stolen?.json).toMatchObject({ success: false, stdout: '', error: expect.stringMatching(/not found/) });
      expect(withoutIds(stolen!.text, sid)).toBe(withoutIds(invented!.text, unknown));
      expect(listed?.text).not.toContain(sid);
    });
  }

  it("through a dispatcher, many callers' sessions belong to as many distinct owners on the workers", async () => {
    const callers = Array.from({ length: 10 }, (_, i) => `caller-${i}`);
    for (const who of callers)
      await (await client(connectors.dispatcher.mcpUrl, who)).call('execute_demo_code', { code: '1' });
    const owners = new Map<string, string>();
    for (const [i, w] of workers.entries()) {
      const { sessions } = (await (await fetch(`${w.url}/admin/v1/sessions`, { headers: ADMIN })).json()) as {
        sessions: { owner: string }[];
      };
      for (const s of sessions) if (s.owner.startsWith('caller-')) owners.set(s.owner, `w${i + 1}`);
    }
    expect([...owners.keys()].sort()).toEqual(callers.map((c) => `${c}@tenant-a`).sort());
    expect(new Set(owners.values())).toEqual(new Set(['w1', 'w2']));
  });
});

describe('connector start-up with a shared upstream identity', () => {
  let demo: RunningExecutor;
  beforeAll(async () => {
    demo = await startExecutor({ config: { sessions: { warm_pool: 0 } } });
  });
  afterAll(async () => {
    await demo?.stop();
  });

  it('logs at start that all callers share one upstream identity when auth.mode none is written', async () => {
    const router = await startRouter({ upstreams: [{ name: 'demo', url: demo.url, auth: { mode: 'none' } }] });
    try {
      expect(router.logs()).toMatch(
        /auth\.mode: none sends no token, so every caller reaches upstream \W*demo\W* as one and the same identity/,
      );
    } finally {
      await router.stop();
    }
  });

  it('refuses auth.mode none beside Entra auth unless shared_identity_acknowledged is set', async () => {
    const entra = { mode: 'entra', tenant_id: '00000000-0000-0000-0000-000000000001', client_id: 'router-app' };
    await expect(
      startDispatcher({ auth: entra, workers: [{ name: 'w1', url: demo.url }], worker_auth: { mode: 'none' } }),
    ).rejects.toThrow(/one and the same identity.*shared_identity_acknowledged: true/s);
  });
});
