import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startExecutor, type RunningExecutor } from '../../../test/support/executor-process';
import { ROOT } from '../../../test/support/paths';
import { pyCalls } from '../../../test/support/py-client';
import { startRouter, until, type RunningRouter } from '../../../test/support/router-process';
import { listenForTasks, tasksSession } from '../../../test/support/tasks-client';
import { cancelSleepThenRead, devToken, v1Client, v2Client, type TestClient } from '../../../test/support/ts-clients';
import { ADMIN } from '../../../test/support/admin';

const ex = (name: 'demo' | 'science') => {
  const dir = join(ROOT, 'examples', 'servers', name);
  return {
    name,
    tools: { manifest: join(dir, 'tools.yaml') },
    skills: { dir: join(dir, 'skills') },
    sessions: { warm_pool: 1 },
  };
};
const passthrough = { mode: 'passthrough', audience: 'dev' };

describe('router over the demo and science executors (real processes)', () => {
  let demo: RunningExecutor;
  let science: RunningExecutor;
  let router: RunningRouter;
  let alice: TestClient;

  beforeAll(async () => {
    [demo, science] = await Promise.all([
      startExecutor({ config: { ...ex('demo'), execution: { mode: 'adaptive', promotion_threshold_s: 1 } } }),
      startExecutor({ config: ex('science') }),
    ]);
    router = await startRouter({
      upstreams: [
        { name: 'demo', url: demo.mcpUrl, auth: passthrough }, // with /mcp
        { name: 'sci', url: science.url, auth: passthrough }, // without: tool names still come from the upstream ('science')
      ],
      bridges: [
        {
          from_state: 'demo.summary_ready',
          to_state: 'science.data_loaded',
          description: 'a demo summary feeds the science statistics',
        },
      ],
      connectors: { health_interval_seconds: 1 },
    });
    alice = await v2Client(router.mcpUrl, 'auto', devToken('alice'));
  });
  afterAll(async () => {
    await alice?.close();
    await router?.stop();
    await Promise.all([demo?.stop(), science?.stop()]);
  });

  it('merges both catalogs, names proxies as each upstream names its tools, and serves /catalog with skills', async () => {
    const tools = await alice.listTools();
    for (const t of [
      'execute_demo_code',
      'execute_science_code',
      'demo_list_sessions',
      'science_check_job',
      'demo_parallel_execute',
      'load_science_skill',
      'search_lab_tools',
      'load_lab_skill',
      'plan_lab_workflow',
    ])
      expect(tools).toContain(t);
    expect(await alice.describeTool('execute_demo_code')).toContain('execution_session_id');
    const catalog = (await (await fetch(`${router.url}/catalog`)).json()) as {
      server_name: string;
      tools: { server_name: string }[];
      skills: { server_name: string; upstream: string }[];
      mcp_tools: { name: string }[];
    };
    expect(catalog.server_name).toBe('lab');
    expect(new Set(catalog.tools.map((t) => t.server_name))).toEqual(new Set(['demo', 'science']));
    expect(catalog.skills.some((s) => s.server_name === 'science' && s.upstream === 'sci')).toBe(true);
    expect(catalog.mcp_tools.map((t) => t.name)).toContain('execute_science_code');
    const health = (await (await fetch(`${router.url}/health`)).json()) as { upstreams: Record<string, string> };
    expect(health.upstreams).toEqual({ demo: 'connected', sci: 'connected' });
  });

  it('executes on both servers and resumes a session by execution_session_id', async () => {
    const a = await alice.call('execute_demo_code', { code: 'x = 41' });
    expect(a.json.session_id).toMatch(/^s-/);
    const b = await alice.call('execute_demo_code', { code: 'x + 1', execution_session_id: a.json.session_id });
    expect(b.json).toMatchObject({ success: true, stdout: '42\n' });
    const s = await alice.call('execute_science_code', {
      code: 'import networkx as nx\nnx.path_graph(4).number_of_edges()',
    });
    expect(s.json).toMatchObject({ success: true, stdout: '3\n' });
  });

  it('passes the ids a result names in _meta through, on the fast path and on the SDK path', async () => {
    const fast = await alice.call('execute_demo_code', { code: '1' });
    expect(fast.meta?.['stoa/refs']).toEqual({ session_id: fast.json.session_id });
    const legacy = await v2Client(router.mcpUrl, 'legacy', devToken('alice'));
    try {
      const r = await legacy.call('execute_science_code', { code: '1' });
      expect(r.meta?.['stoa/refs']).toEqual({ session_id: r.json.session_id });
    } finally {
      await legacy.close();
    }
  });

  it('keeps a 2025-era client in one kernel through its MCP session, with the TS v1 and Python clients too', async () => {
    const legacy = await v2Client(router.mcpUrl, 'legacy', devToken('alice'));
    try {
      await legacy.call('execute_demo_code', { code: 'kept = 7' });
      expect((await legacy.call('execute_demo_code', { code: 'kept * 6' })).json.stdout).toBe('42\n');
    } finally {
      await legacy.close();
    }
    const v1 = await v1Client(router.mcpUrl, devToken('alice'));
    try {
      expect((await v1.call('execute_science_code', { code: '6 * 7' })).json.stdout).toBe('42\n');
    } finally {
      await v1.close();
    }
    for (const mode of ['auto', 'legacy'] as const) {
      const [first, second] = await pyCalls(
        router.mcpUrl,
        mode,
        [
          { tool: 'execute_demo_code', args: { code: 'y = 5' } },
          { tool: 'execute_demo_code', args: { code: 'y * 2' } },
        ],
        { token: devToken('alice') },
      );
      expect(first?.json.success).toBe(true);
      if (mode === 'legacy') expect(second?.json.stdout).toBe('10\n');
    }
  });

  it('relays progress to the caller and cancellation to the upstream kernel', async () => {
    const s = await alice.call('execute_demo_code', { code: 'before_cancel = 3' });
    const r = await alice.callWithProgress!('execute_demo_code', {
      code: "import time\nfor i in range(3):\n    print('step', i, flush=True)\n    time.sleep(0.2)",
      execution_session_id: s.json.session_id,
    });
    expect(r.json.success).toBe(true);
    expect(r.progress.join('\n')).toContain('step 1');
    const after = await cancelSleepThenRead(alice, s.json.session_id, 'before_cancel', 500);
    expect(after.stdout).toBe('3\n');
    expect(after.elapsedMs).toBeLessThan(10_000);
  });

  it('runs background jobs and parallel batches through the router', async () => {
    const job = await alice.call('execute_demo_code', { code: 'import time\ntime.sleep(2)\nprint("slow done")' });
    expect(job.json.job_id).toBeDefined();
    const done = await until('job completion', async () => {
      const r = await alice.call('demo_check_job', { job_id: job.json.job_id });
      return r.json.status === 'running' ? undefined : r.json;
    });
    expect(done).toMatchObject({ status: 'completed' });
    const batch = await alice.call('science_parallel_execute', {
      code: 'result = n * n',
      inputs: [{ n: 2 }, { n: 3 }],
    });
    const finished = await until('batch completion', async () => {
      const r = await alice.call('science_check_batch', { batch_id: batch.json.batch_id });
      return r.json.status === 'running' ? undefined : r.json;
    });
    expect(finished).toMatchObject({ status: 'completed', completed: 2 });
  });

  it('declares the Tasks extension its upstreams declare and relays tasks/*, and task notifications to the owner only', async () => {
    const { session, client, close } = await tasksSession(router.mcpUrl, devToken('alice'));
    try {
      expect(client.getServerCapabilities()?.extensions).toHaveProperty(['io.modelcontextprotocol/tasks']);
      const exec = await session.callTool('execute_demo_code', { code: 'import time\ntime.sleep(30)' });
      if (exec.kind !== 'task') throw new Error('expected a task');
      const task = session.task(exec.handle.taskId);
      expect((await task.snapshot()).status).toBe('working');
      // A job takes no input: the executor's own answer comes back (not -32601 from the router).
      const update = await task.update({}).then(
        () => 'accepted',
        (e: Error) => e.message,
      );
      expect(update).toMatch(/takes no input/);
      const taskId = String(exec.handle.taskId);
      const bob = await listenForTasks(router.mcpUrl, devToken('bob'), [taskId]);
      expect(bob.messages.map((m) => m.method ?? 'end')).toEqual(['notifications/subscriptions/acknowledged', 'end']);
      const heard = await listenForTasks(router.mcpUrl, devToken('alice'), [taskId], { onOpen: () => exec.cancel() });
      expect(heard.messages[0]?.params?.notifications).toEqual({ taskIds: [taskId] });
      const told = heard.messages.filter((m) => m.method === 'notifications/tasks').map((m) => m.params?.status);
      expect([told[0], told.at(-1)]).toEqual(['working', 'cancelled']);
      expect((await exec.settle()).outcome.status).toBe('cancelled');
    } finally {
      await close();
    }
  });

  it('never lets two users share upstream sessions', async () => {
    const bob = await v2Client(router.mcpUrl, 'auto', devToken('bob'));
    try {
      const mine = await alice.call('execute_demo_code', { code: 'secret = "alice"' });
      const theirs = await bob.call('demo_list_sessions', {});
      expect(JSON.stringify(theirs.json)).not.toContain(mine.json.session_id);
      const stolen = await bob.call('execute_demo_code', {
        code: 'secret',
        execution_session_id: mine.json.session_id,
      });
      expect(stolen.json.stdout ?? '').not.toContain('alice');
      expect(JSON.stringify(stolen.json)).toMatch(/not found/i);
      const legacyBob = await v2Client(router.mcpUrl, 'legacy', devToken('bob'));
      try {
        expect((await legacyBob.call('execute_demo_code', { code: "'secret' in globals()" })).json.stdout).toBe(
          'False\n',
        );
      } finally {
        await legacyBob.close();
      }
    } finally {
      await bob.close();
    }
  });

  it('finds tools on both servers, disambiguates skills, and plans a path across a bridge', async () => {
    const hits = await alice.call('search_lab_tools', {
      query: 'shortest path between two nodes',
      top: 3,
      category: 'tools',
    });
    expect((hits.json.tools as { name: string; server_name: string; to_access: string }[])[0]).toMatchObject({
      server_name: 'science',
      to_access: 'Call via execute_science_code',
    });
    const unknown = await alice.call('load_lab_skill', { skill_name: 'no-such-skill' });
    expect(unknown.json.error).toBe("Skill 'no-such-skill' not found.");
    const badUpstream = await alice.call('load_lab_skill', { skill_name: 'csv-summary', upstream: 'nowhere' });
    expect(badUpstream.json).toMatchObject({
      error: "Unknown upstream 'nowhere'.",
      available_upstreams: ['demo', 'sci'],
    });
    expect((await alice.call('load_lab_skill', { skill_name: 'csv-summary' })).text).toContain('name: csv-summary');
    const path = await alice.call('plan_lab_workflow', {
      mode: 'path',
      current_state: 'demo.table_loaded',
      target_state: 'science.stats_summarized',
    });
    const steps = JSON.stringify(path.json);
    expect(steps).toContain('bridge:demo.summary_ready→science.data_loaded');
    expect(path.json.path).not.toBeNull();
  });

  it('keeps serving demo while science is down, and takes science back without a restart', async () => {
    const port = science.port;
    await science.stop('SIGKILL');
    await until(
      'science marked unavailable',
      async () =>
        ((await (await fetch(`${router.url}/health`)).json()) as { upstreams: Record<string, string> }).upstreams
          .sci === 'unavailable' || undefined,
    );
    expect(await alice.listTools()).not.toContain('execute_science_code');
    const hits = await alice.call('search_lab_tools', { query: '', top: 999, category: 'tools' });
    expect((hits.json.tools as { server_name: string }[]).every((t) => t.server_name === 'demo')).toBe(true);
    expect((await alice.call('execute_demo_code', { code: '2 + 2' })).json.stdout).toBe('4\n');
    const admin = (await (await fetch(`${router.url}/admin/v1/upstreams`, { headers: ADMIN })).json()) as {
      upstreams: { name: string; state: string; last_error: string | null }[];
    };
    expect(admin.upstreams.find((u) => u.name === 'sci')).toMatchObject({
      state: 'unavailable',
      // Refused when the health check connects anew; reset when it was on a kept-alive socket as the server died.
      last_error: expect.stringMatching(/ECONNREFUSED|ECONNRESET|fetch|connect|socket/i),
    });
    science = await startExecutor({ config: ex('science'), port });
    await until('science back', async () =>
      (await alice.listTools()).includes('execute_science_code') ? true : undefined,
    );
    expect((await alice.call('execute_science_code', { code: '1 + 1' })).json.stdout).toBe('2\n');
  });
});

describe('router start-up refusals', () => {
  let demo: RunningExecutor;
  beforeAll(async () => {
    demo = await startExecutor({ config: ex('demo') });
  });
  afterAll(async () => {
    await demo?.stop();
  });

  it("refuses an invalid bridge with the reference's message", async () => {
    const start = startRouter({
      upstreams: [{ name: 'demo', url: demo.url, auth: passthrough }],
      bridges: [{ from_state: 'demo.nowhere', to_state: 'demo.table_loaded' }],
    });
    await expect(start).rejects.toThrow(
      "Invalid bridge edge in 'lab' config: from_state 'demo.nowhere' not found in any upstream's state_produces",
    );
  });

  it('refuses token passthrough to an upstream that is not the same protected resource', async () => {
    const start = startRouter({
      auth: { mode: 'entra', tenant_id: '00000000-0000-0000-0000-000000000001', client_id: 'router-app' },
      upstreams: [{ name: 'demo', url: demo.url, auth: { mode: 'passthrough', audience: 'api://demo-executor' } }],
    });
    await expect(start).rejects.toThrow(
      /passthrough would forward callers' tokens to audience 'api:\/\/demo-executor'.*mode: obo/s,
    );
  });

  it('takes upstreams from UPSTREAM_<NAME>_URL', async () => {
    const router = await startRouter({}, { UPSTREAM_DEMO_URL: demo.mcpUrl });
    try {
      const health = (await (await fetch(`${router.url}/health`)).json()) as { upstreams: Record<string, string> };
      expect(health.upstreams).toEqual({ demo: 'connected' });
    } finally {
      await router.stop();
    }
  });
});
