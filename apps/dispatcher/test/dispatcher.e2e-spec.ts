import { once } from 'node:events';
import { createServer, request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startExecutor, type RunningExecutor } from '../../../test/support/executor-process';
import { startDispatcher, until, type RunningRouter } from '../../../test/support/router-process';
import { devToken, rawToolCall, v2Client, type TestClient } from '../../../test/support/ts-clients';
import { ADMIN } from '../../../test/support/admin';
import { tasksSession } from '../../../test/support/tasks-client';

const KEY = 'dispatcher-test-key-0123456789abcdef';
const worker = (replica: string, port?: number) =>
  startExecutor({
    port,
    config: { sessions: { replica, id_signing_key: KEY, warm_pool: 1, max_sessions: 200, session_id_header: true } },
  });
const replicaOf = (sid: string) => Buffer.from(sid.split('.')[1] ?? '', 'base64url').toString();

describe('dispatcher over three identical workers (real processes)', () => {
  const workers: RunningExecutor[] = [];
  const dispatchers: Record<string, RunningRouter> = {};
  const clients: TestClient[] = [];
  const client = async (d: RunningRouter, who = 'alice') => {
    const c = await v2Client(d.mcpUrl, 'auto', devToken(who));
    clients.push(c);
    return c;
  };
  const config = (extra: Record<string, unknown>) => ({
    workers: workers.map((w, i) => ({ name: `w${i + 1}`, url: w.url, weight: i === 1 ? 2 : 1 })),
    worker_auth: { mode: 'passthrough', audience: 'dev' },
    session_key: KEY,
    health_check_interval: 1,
    ...extra,
  });

  beforeAll(async () => {
    workers.push(...(await Promise.all(['replica-a', 'replica-b', 'replica-c'].map((r) => worker(r)))));
    [dispatchers.rr, dispatchers.rr2, dispatchers.reroute, dispatchers.least] = await Promise.all([
      startDispatcher(config({})),
      startDispatcher(config({})),
      startDispatcher(config({ worker_failure_policy: 'reroute' })),
      startDispatcher(config({ strategy: 'least_loaded' })),
    ]);
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await Promise.all(Object.values(dispatchers).map((d) => d.stop()));
    await Promise.all(workers.map((w) => w.stop()));
  });

  it('exposes the whole worker surface, named as the workers name it', async () => {
    const c = await client(dispatchers.rr!);
    const tools = await c.listTools();
    for (const t of [
      'execute_demo_code',
      'demo_list_sessions',
      'demo_check_job',
      'demo_parallel_execute',
      'demo_close_session',
    ])
      expect(tools).toContain(t);
    expect(tools).not.toContain('execute_code');
  });

  it("spreads new sessions by weight (1:2:1) and lists a user's sessions from every worker", async () => {
    const c = await client(dispatchers.rr!, 'spread');
    const counts: Record<string, number> = {};
    for (let i = 0; i < 20; i++) {
      const r = await c.call('execute_demo_code', { code: '1' });
      const replica = replicaOf(String(r.json.session_id));
      counts[replica] = (counts[replica] ?? 0) + 1;
    }
    expect(counts).toEqual({ 'replica-a': 5, 'replica-b': 10, 'replica-c': 5 });
    const listed = await c.call('demo_list_sessions', {});
    expect(listed.json.count).toBe(20);
  });

  it('routes a session to its worker from any dispatcher replica (affinity carried in the signed id)', async () => {
    const a = await client(dispatchers.rr!);
    const b = await client(dispatchers.rr2!);
    const s = await a.call('execute_demo_code', { code: 'kept = "here"' });
    for (let i = 0; i < 4; i++)
      expect(
        (await b.call('execute_demo_code', { code: 'kept', execution_session_id: s.json.session_id })).json.stdout,
      ).toBe("'here'\n");
    const job = await a.call('demo_parallel_execute', { code: 'result = n + 1', inputs: [{ n: 1 }, { n: 2 }] });
    const done = await until('batch through the other replica', async () => {
      const r = await b.call('demo_check_batch', { batch_id: job.json.batch_id });
      return r.json.status === 'running' ? undefined : r.json;
    });
    expect(done).toMatchObject({ status: 'completed', completed: 2 });
  });

  it('keeps a 2025-era client on one worker and kernel through its MCP session, and honours Mcp-Param-Execution-Session-Id', async () => {
    const legacy = await v2Client(dispatchers.rr!.mcpUrl, 'legacy', devToken('old'));
    clients.push(legacy);
    await legacy.call('execute_demo_code', { code: 'counter = 1' });
    for (let i = 0; i < 3; i++) await legacy.call('execute_demo_code', { code: 'counter += 1' });
    expect((await legacy.call('execute_demo_code', { code: 'counter' })).json.stdout).toBe('4\n');
    const c = await client(dispatchers.rr2!, 'old');
    const s = await c.call('execute_demo_code', { code: 'h = "by header"' });
    const r = await rawToolCall(
      dispatchers.rr!.mcpUrl,
      'execute_demo_code',
      { code: 'h', execution_session_id: s.json.session_id },
      { token: devToken('old'), headers: { 'mcp-param-execution-session-id': String(s.json.session_id) } },
    );
    expect(r.text).toContain('by header');
  });

  it('with sessions.session_id_header, executors declare execution_session_id as x-mcp-header and 2026-07-28 clients mirror it', async () => {
    const seen: (string | undefined)[] = [];
    const proxy = createServer((req, res) => {
      seen.push(req.headers['mcp-param-execution-session-id'] as string | undefined);
      const up = request(`${workers[1]!.url}${req.url}`, { method: req.method, headers: req.headers }, (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      });
      req.pipe(up);
    });
    proxy.listen(0, '127.0.0.1');
    await once(proxy, 'listening');
    try {
      const c = await v2Client(
        `http://127.0.0.1:${(proxy.address() as { port: number }).port}/mcp`,
        'auto',
        devToken('lb'),
      );
      clients.push(c);
      const s = await c.call('execute_demo_code', { code: 'z = 1' });
      seen.length = 0;
      expect(
        (await c.call('execute_demo_code', { code: 'z', execution_session_id: s.json.session_id })).json.stdout,
      ).toBe('1\n');
      expect(seen).toContain(s.json.session_id);
    } finally {
      proxy.closeAllConnections();
      proxy.close();
    }
  });

  it('sends new work to the least loaded worker', async () => {
    const c = await client(dispatchers.least!, 'busy');
    const long = c.call('execute_demo_code', { code: 'import time\ntime.sleep(3)' });
    const busy = await until('the long call in flight', async () => {
      const ws = (
        (await (await fetch(`${dispatchers.least!.url}/admin/v1/workers`, { headers: ADMIN })).json()) as {
          workers: { name: string; in_flight: number }[];
        }
      ).workers;
      return ws.find((w) => w.in_flight > 0)?.name;
    });
    const others = new Set<string>();
    for (let i = 0; i < 3; i++)
      others.add(replicaOf(String((await c.call('execute_demo_code', { code: '1' })).json.session_id)));
    const busyReplica = ['replica-a', 'replica-b', 'replica-c'][Number(busy.slice(1)) - 1]!;
    expect(others.has(busyReplica)).toBe(false);
    await long;
  });

  it('on a dead worker: `error` says the session is gone, `reroute` continues elsewhere and says state was lost; the worker rejoins', async () => {
    const a = await client(dispatchers.rr!, 'victim');
    const r = await client(dispatchers.reroute!, 'victim');
    // Find a session on worker 1 (replica-a).
    let sid = '';
    while (!sid) {
      const s = await a.call('execute_demo_code', { code: 'v = 1' });
      if (replicaOf(String(s.json.session_id)) === 'replica-a') sid = String(s.json.session_id);
    }
    const port = workers[0]!.port;
    await workers[0]!.stop('SIGKILL');
    await until('w1 unhealthy', async () =>
      ((await (await fetch(`${dispatchers.rr!.url}/health`)).json()) as { workers: Record<string, string> }).workers
        .w1 === 'unhealthy'
        ? true
        : undefined,
    );
    await until('w1 unhealthy at the rerouting dispatcher', async () =>
      ((await (await fetch(`${dispatchers.reroute!.url}/health`)).json()) as { workers: Record<string, string> })
        .workers.w1 === 'unhealthy'
        ? true
        : undefined,
    );
    const refused = await a.call('execute_demo_code', { code: 'v', execution_session_id: sid });
    expect(refused.isError).toBe(true);
    expect(refused.json.error).toMatch(/Worker 'w1' that holds session .* is unavailable.*start a new session/s);
    const moved = await r.call('execute_demo_code', { code: "'v' in globals()", execution_session_id: sid });
    expect(moved.json).toMatchObject({ success: true, stdout: 'False\n', rerouted: true });
    expect(String(moved.json.warning)).toContain('state (variables, imports, files) was lost');
    expect(replicaOf(String(moved.json.session_id))).not.toBe('replica-a');
    workers[0] = await worker('replica-a', port);
    await until('w1 back', async () =>
      ((await (await fetch(`${dispatchers.rr!.url}/health`)).json()) as { workers: Record<string, string> }).workers
        .w1 === 'healthy'
        ? true
        : undefined,
    );
    const seen = new Set<string>();
    for (let i = 0; i < 8; i++)
      seen.add(replicaOf(String((await a.call('execute_demo_code', { code: '1' })).json.session_id)));
    expect(seen.has('replica-a')).toBe(true);
  });
});

describe('dispatcher relaying MCP Tasks (real processes; workers promote long runs to jobs)', () => {
  const workers: RunningExecutor[] = [];
  let rr: RunningRouter;
  let rr2: RunningRouter;
  beforeAll(async () => {
    workers.push(
      ...(await Promise.all(
        ['task-a', 'task-b'].map((replica) =>
          startExecutor({
            config: {
              sessions: { replica, id_signing_key: KEY, warm_pool: 1 },
              execution: { mode: 'adaptive', promotion_threshold_s: 1 },
            },
          }),
        ),
      )),
    );
    const config = {
      workers: workers.map((w, i) => ({ name: `w${i + 1}`, url: w.url })),
      worker_auth: { mode: 'passthrough', audience: 'dev' },
      session_key: KEY,
    };
    [rr, rr2] = await Promise.all([startDispatcher(config), startDispatcher(config)]);
  });
  afterAll(async () => {
    await Promise.all([rr, rr2].map((d) => d?.stop()));
    await Promise.all(workers.map((w) => w.stop()));
  });

  it("relays tasks/* to the worker that owns the task, from any replica; another user's task answers like an unknown one", async () => {
    const alice = await tasksSession(rr.mcpUrl, devToken('alice'));
    const bob = await tasksSession(rr2.mcpUrl, devToken('bob'));
    const viaReplica = await tasksSession(rr2.mcpUrl, devToken('alice'));
    try {
      expect(alice.client.getServerCapabilities()?.extensions).toHaveProperty(['io.modelcontextprotocol/tasks']);
      const exec = await alice.session.callTool('execute_demo_code', { code: 'import time\ntime.sleep(30)' });
      if (exec.kind !== 'task') throw new Error('expected a task');
      const taskId = exec.handle.taskId;
      expect((await viaReplica.session.task(taskId).snapshot()).status).toBe('working');
      // The worker's own answer comes back (a job takes no input), not -32601 from the dispatcher.
      const update = await alice.session
        .task(taskId)
        .update({})
        .then(
          () => 'accepted',
          (e: Error) => e.message,
        );
      expect(update).toMatch(/takes no input/);
      const refusal = (id: string) =>
        bob.session
          .task(id as typeof taskId)
          .snapshot()
          .then(
            () => 'visible',
            (e: Error) => e.message.replaceAll(id, '<id>'),
          );
      const unknown = await refusal(`${taskId.slice(0, -4)}zzzz`);
      expect(unknown).toMatch(/not found/i);
      expect(await refusal(taskId)).toBe(unknown);
      await exec.cancel();
      expect((await exec.settle()).outcome.status).toBe('cancelled');
    } finally {
      await Promise.all([alice.close(), bob.close(), viaReplica.close()]);
    }
  });
});

describe('dispatcher config', () => {
  it("refuses sticky_session without session_affinity with the reference's message", async () => {
    await expect(
      startDispatcher({
        workers: [{ name: 'w1', url: 'http://127.0.0.1:9' }],
        strategy: 'sticky_session',
        session_affinity: false,
      }),
    ).rejects.toThrow("strategy='sticky_session' requires session_affinity=True");
  });
});
