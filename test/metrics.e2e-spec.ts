import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startActivity, type RunningActivity } from './support/activity';
import { ADMIN } from './support/admin';
import { startExecutor, type RunningExecutor } from './support/executor-process';
import { scrape, sampleOf, type MetricFamily } from './support/metrics';
import { ROOT } from './support/paths';
import { freePort } from './support/ports';
import { startDispatcher, startGateway, startRouter, until, type RunningRouter } from './support/router-process';
import { shutDown } from './support/app-process';
import { devToken, rawToolCall, v1Client, v2Client, type TestClient } from './support/ts-clients';

const demo = join(ROOT, 'examples', 'servers', 'demo');
const passthrough = { mode: 'passthrough', audience: 'dev' };
const EXECUTE = 'execute_demo_code';

describe('/metrics on every app, moving with real MCP calls (real processes)', () => {
  let executor: RunningExecutor;
  let router: RunningRouter;
  let gateway: RunningRouter;
  let dispatcher: RunningRouter;
  let activity: RunningActivity;
  let activityMetered: RunningActivity;
  let viaRouter: TestClient;
  let legacyViaRouter: TestClient;

  beforeAll(async () => {
    executor = await startExecutor({
      config: {
        tools: { manifest: join(demo, 'tools.yaml') },
        skills: { dir: join(demo, 'skills') },
        sessions: { warm_pool: 1 },
        execution: { mode: 'adaptive', promotion_threshold_s: 1 },
        // Nothing listens there: every event the publisher sends is lost, and counted.
        activity: { url: `http://127.0.0.1:${await freePort()}`, retry_delay_ms: 10 },
      },
    });
    [router, gateway, dispatcher, activity] = await Promise.all([
      startRouter({ upstreams: [{ name: 'demo', url: executor.mcpUrl, auth: passthrough }] }),
      startGateway({
        upstream: { name: 'demo', url: executor.mcpUrl, auth: passthrough },
        policy: { max_calls_per_minute: 2 },
      }),
      startDispatcher({ workers: [{ name: 'w1', url: executor.mcpUrl }], metrics: { access: 'loopback' } }),
      startActivity({ metrics: { enabled: false } }),
    ]);
    activityMetered = await startActivity();
    viaRouter = await v2Client(router.mcpUrl, 'auto', devToken('alice'));
    legacyViaRouter = await v1Client(router.mcpUrl, devToken('alice'));
  });
  afterAll(() =>
    shutDown(viaRouter, legacyViaRouter, router, gateway, dispatcher, activity, activityMetered, executor),
  );

  it('answers the admin only: no token is refused like /admin/v1, the admin token gets the text format', async () => {
    const refused = await fetch(`${executor.url}/metrics`);
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain('X-Stoa-Admin-Token');
    const wrong = await fetch(`${router.url}/metrics`, { headers: { 'x-stoa-admin-token': 'not-the-token' } });
    expect(wrong.status).toBe(403);
    for (const app of [executor, router, gateway]) {
      const families = await scrape(app.url);
      const names = families.map((f) => f.name);
      // Node's default metrics and ours, one registry.
      expect(names).toEqual(
        expect.arrayContaining([
          'process_cpu_user_seconds',
          'nodejs_eventloop_lag_seconds',
          'stoa_tool_calls',
          'stoa_tool_call_duration_seconds',
          'stoa_upstream_hop_duration_seconds',
          'stoa_activity_events_dropped',
        ]),
      );
      expect(families.find((f) => f.name === 'stoa_tool_call_duration_seconds')?.type).toBe('histogram');
    }
  });

  it('has every metric the Grafana dashboard in examples/grafana queries', async () => {
    const dashboard = readFileSync(join(ROOT, 'examples', 'grafana', 'stoa.json'), 'utf8');
    const queried = new Set([...dashboard.matchAll(/\b(?:stoa|nodejs|process)_[a-z0-9_]+/g)].map((m) => m[0]));
    const families = [...(await scrape(executor.url)), ...(await scrape(gateway.url))];
    const names = new Set(families.map((f) => f.name)); // the parser names counters without `_total`
    const family = (name: string) => (names.has(name) ? name : name.replace(/_(bucket|count|sum|total)$/, ''));
    expect(queried.size).toBeGreaterThan(10);
    expect([...queried].filter((name) => !names.has(family(name)))).toEqual([]);
  });

  it('serves any loopback caller without credentials when metrics.access is loopback, and nothing when disabled', async () => {
    const families = await scrape(dispatcher.url, {});
    expect(sampleOf(families, 'stoa_upstream_healthy', { upstream: 'w1', app: 'dispatcher', server: 'pool' })).toBe(1);
    expect((await fetch(`${activity.url}/metrics`, { headers: ADMIN })).status).toBe(404);
  });

  it('counts a 2026-07-28 call (fast path) and a 2025-era call through the router, on the router and the executor', async () => {
    const ok = { tool: EXECUTE, outcome: 'ok' };
    const [r0, e0] = await Promise.all([scrape(router.url), scrape(executor.url)]);
    const modern = await viaRouter.call(EXECUTE, { code: 'print(6 * 7)' });
    expect(modern.json).toMatchObject({ success: true, stdout: '42\n' });
    const legacy = await legacyViaRouter.call(EXECUTE, { code: 'print(1 + 1)' });
    expect(legacy.json).toMatchObject({ success: true, stdout: '2\n' });
    const [r1, e1] = await Promise.all([scrape(router.url), scrape(executor.url)]);

    expect(sampleOf(r1, 'stoa_tool_calls_total', ok) - sampleOf(r0, 'stoa_tool_calls_total', ok)).toBe(2);
    expect(sampleOf(e1, 'stoa_tool_calls_total', ok) - sampleOf(e0, 'stoa_tool_calls_total', ok)).toBe(2);
    const calls = 'stoa_tool_call_duration_seconds_count';
    expect(sampleOf(e1, calls, ok) - sampleOf(e0, calls, ok)).toBe(2);
    const hop = { upstream: 'demo', outcome: 'ok' };
    const hops = 'stoa_upstream_hop_duration_seconds_count';
    expect(sampleOf(r1, hops, hop) - sampleOf(r0, hops, hop)).toBe(2);
    expect(sampleOf(r1, 'stoa_upstream_healthy', { upstream: 'demo' })).toBe(1);
    expect(sampleOf(r1, 'stoa_tool_calls_total', { app: 'router', server: 'lab' })).toBeGreaterThan(0);
  });

  it('labels a tool failure with outcome error', async () => {
    const error = { tool: 'load_demo_skill', outcome: 'error' };
    const before = sampleOf(await scrape(executor.url), 'stoa_tool_calls_total', error);
    const r = await viaRouter.call('load_demo_skill', { skill_name: 'no-such-skill' });
    expect(r.isError).toBe(true);
    expect(sampleOf(await scrape(executor.url), 'stoa_tool_calls_total', error) - before).toBe(1);
  });

  it('shows kernels, the warm pool, kernel starts and jobs on the executor', async () => {
    const started = await viaRouter.call(EXECUTE, { code: 'import time\ntime.sleep(1.5)' }); // promoted to a job
    const jobId = started.json.job_id as string;
    expect(jobId).toEqual(expect.any(String));
    await until('the job to finish', async () => {
      const r = await viaRouter.call('demo_check_job', { job_id: jobId });
      return r.json.status === 'completed' ? r : undefined;
    });
    const f = await scrape(executor.url);
    const pool = ((await (await fetch(`${executor.url}/health`)).json()) as { warm_pool: { target: number } })
      .warm_pool;
    expect(pool.target).toBeGreaterThanOrEqual(1); // warm_pool 1, raised by the sessions this file started
    expect(sampleOf(f, 'stoa_warm_pool_target')).toBe(pool.target);
    expect(sampleOf(f, 'stoa_kernels', { state: 'live' })).toBeGreaterThanOrEqual(1);
    expect(sampleOf(f, 'stoa_kernel_start_duration_seconds_count', { outcome: 'ok' })).toBeGreaterThanOrEqual(1);
    expect(sampleOf(f, 'stoa_jobs', { kind: 'background', state: 'completed' })).toBeGreaterThanOrEqual(1);
    expect(sampleOf(f, 'stoa_jobs', { kind: 'background', state: 'running' })).toBe(0);
  });

  it('moves stoa_batches and the batch items in stoa_jobs with a real batch, and its cancel', async () => {
    const batches = (f: MetricFamily[], state: string) => sampleOf(f, 'stoa_batches', { state });
    const items = (f: MetricFamily[], state: string) => sampleOf(f, 'stoa_jobs', { kind: 'batch_item', state });
    const f0 = await scrape(executor.url);
    const r = await viaRouter.call('demo_parallel_execute', { code: 'result = x * 2', inputs: [{ x: 1 }, { x: 2 }] });
    const batchId = r.json.batch_id as string;
    expect(batchId).toEqual(expect.any(String));
    const f1 = await scrape(executor.url);
    expect(batches(f1, 'active') - batches(f0, 'active')).toBe(1);
    await until('the batch to complete', async () => {
      const view = await viaRouter.call('demo_check_batch', { batch_id: batchId });
      return view.json.status === 'completed' ? view : undefined;
    });
    const f2 = await scrape(executor.url);
    expect(items(f2, 'completed') - items(f0, 'completed')).toBe(2);
    expect(items(f2, 'queued') + items(f2, 'running')).toBe(0);
    await viaRouter.call('demo_cancel_batch', { batch_id: batchId });
    const f3 = await scrape(executor.url);
    expect(batches(f3, 'active') - batches(f0, 'active')).toBe(0);
    expect(batches(f3, 'cancelled') - batches(f0, 'cancelled')).toBe(1);
  });

  it('counts the events the activity app stored on its own /metrics, by type, and none of a refused batch', async () => {
    const ingested = (f: MetricFamily[], type: string) => sampleOf(f, 'stoa_activity_events_ingested_total', { type });
    const before = await scrape(activityMetered.url);
    const ev = (type: string) => ({ type, server: 'demo', user: 'alice@tenant-a' });
    const ok = await activityMetered.post({ events: [ev('code_executed'), ev('code_executed'), ev('tool_search')] });
    expect(ok.status).toBe(200);
    const refused = await activityMetered.post({ events: [ev('code_executed'), { type: 'nope', server: 'demo' }] });
    expect(refused.status).toBe(400);
    const after = await scrape(activityMetered.url);
    expect(ingested(after, 'code_executed') - ingested(before, 'code_executed')).toBe(2);
    expect(ingested(after, 'tool_search') - ingested(before, 'tool_search')).toBe(1);
    expect(sampleOf(after, 'process_cpu_user_seconds_total', { app: 'activity' })).toBeGreaterThan(0);
  });

  it('counts the gateway rate limit refusing the third call in a minute', async () => {
    const carol = devToken('carol');
    const before = sampleOf(await scrape(gateway.url), 'stoa_rate_limit_rejections_total', { limit: 'all' });
    const results = [];
    for (let i = 0; i < 3; i++)
      results.push(await rawToolCall(gateway.mcpUrl, EXECUTE, { code: '1' }, { token: carol }));
    expect(results.map((r) => r.isError)).toEqual([false, false, true]);
    expect(results[2]?.json.error).toContain('Rate limit exceeded');
    const after = await scrape(gateway.url);
    expect(sampleOf(after, 'stoa_rate_limit_rejections_total', { limit: 'all' }) - before).toBe(1);
    expect(sampleOf(after, 'stoa_tool_calls_total', { tool: EXECUTE, outcome: 'error' })).toBeGreaterThanOrEqual(1);
  });

  it('counts activity events the publisher lost while the activity app is unreachable', async () => {
    await viaRouter.call(EXECUTE, { code: 'print("lost")' });
    const dropped = await until('a dropped activity event', async () => {
      const n = sampleOf(await scrape(executor.url), 'stoa_activity_events_dropped_total');
      return n > 0 ? n : undefined;
    });
    expect(dropped).toBeGreaterThanOrEqual(1);
  });
});
