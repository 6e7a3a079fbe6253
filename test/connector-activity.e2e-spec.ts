import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  openStream,
  startActivity,
  TEST_WRITER_SECRET,
  type RunningActivity,
  type SseReader,
} from './support/activity';
import { shutDown } from './support/app-process';
import { startExecutor, type RunningExecutor } from './support/executor-process';
import { ROOT } from './support/paths';
import { startDispatcher, startGateway, startRouter, type RunningRouter } from './support/router-process';
import { devToken, v1Client, v2Client, type TestClient } from './support/ts-clients';

const demo = join(ROOT, 'examples', 'servers', 'demo');
const passthrough = { mode: 'passthrough', audience: 'dev' };
const EXECUTE = 'execute_demo_code';
const ALICE = 'alice@tenant-a';

describe('connectors publish one tool_called event per proxied call (real router, gateway, dispatcher, activity app)', () => {
  let activity: RunningActivity;
  let executor: RunningExecutor;
  let router: RunningRouter;
  let gateway: RunningRouter;
  let dispatcher: RunningRouter;
  let stream: SseReader;
  const clients: TestClient[] = [];

  beforeAll(async () => {
    activity = await startActivity();
    const publish = { ACTIVITY_UI_URL: activity.url, ACTIVITY_UI_SECRET: TEST_WRITER_SECRET };
    executor = await startExecutor({
      config: { tools: { manifest: join(demo, 'tools.yaml') }, skills: { dir: join(demo, 'skills') } },
    });
    [router, gateway, dispatcher] = await Promise.all([
      startRouter({ upstreams: [{ name: 'demo', url: executor.mcpUrl, auth: passthrough }] }, publish),
      startGateway({ upstream: { name: 'demo', url: executor.mcpUrl, auth: passthrough } }, publish),
      startDispatcher({ workers: [{ name: 'w1', url: executor.mcpUrl }], worker_auth: passthrough }, publish),
    ]);
    stream = await openStream(`${activity.url}/stream`, { cookie: await activity.cookie(undefined, true) });
  });
  afterAll(() => {
    stream?.close();
    return shutDown(...clients, router, gateway, dispatcher, executor, activity);
  });

  async function client(url: string, era: 'modern' | 'legacy'): Promise<TestClient> {
    const c =
      era === 'modern' ? await v2Client(url, 'auto', devToken('alice')) : await v1Client(url, devToken('alice'));
    clients.push(c);
    return c;
  }

  /** The tool_called event `server` published for the call that printed `marker`. */
  async function eventOf(server: string, marker: string, c: TestClient): Promise<Record<string, unknown>> {
    const r = await c.call(EXECUTE, { code: `print(${JSON.stringify(marker)})`, description: marker });
    expect(r.json).toMatchObject({ success: true, stdout: `${marker}\n` });
    const mine = (e: Record<string, unknown>) =>
      e.type === 'tool_called' && e.server === server && e.session_id === r.json.session_id;
    await stream.waitFor(() => stream.activity().some(mine));
    const e = stream.activity().find(mine)!;
    expect(e).toMatchObject({
      tool_name: EXECUTE,
      target_server: server === 'pool' ? 'w1' : 'demo',
      success: true,
      user: ALICE,
      description: `${EXECUTE} → ${server === 'pool' ? 'w1' : 'demo'}`,
    });
    expect(e.duration_ms).toEqual(expect.any(Number));
    return e;
  }

  it('the router publishes a 2026-07-28 call (fast path) with the execution session it ran in', async () => {
    await eventOf('lab', 'router-modern', await client(router.mcpUrl, 'modern'));
  });

  it('the router publishes a 2025-era call (SDK path) the same way', async () => {
    await eventOf('lab', 'router-legacy', await client(router.mcpUrl, 'legacy'));
  });

  it('the gateway publishes a proxied call', async () => {
    await eventOf('gw', 'gateway', await client(gateway.mcpUrl, 'modern'));
  });

  it('the dispatcher publishes a proxied call with the worker as upstream', async () => {
    await eventOf('pool', 'dispatcher', await client(dispatcher.mcpUrl, 'modern'));
  });

  it('publishes a failed upstream call with success false', async () => {
    const c = await client(router.mcpUrl, 'modern');
    const r = await c.call(EXECUTE, { code: '1', execution_session_id: 'no-such-session' });
    expect(r.isError).toBe(true);
    const mine = (e: Record<string, unknown>) => e.type === 'tool_called' && e.session_id === 'no-such-session';
    await stream.waitFor(() => stream.activity().some(mine));
    expect(stream.activity().find(mine)).toMatchObject({ server: 'lab', success: false, user: ALICE });
  });

  it('publishes nothing for job polls: a check_job call leaves no event before the next call', async () => {
    const c = await client(router.mcpUrl, 'modern');
    await c.call('demo_check_job', { job_id: 'no-such-job' });
    await c.call('search_demo_tools', { query: 'after the poll' });
    // One publisher queue drains in order: once the search's event is here, a poll's would be too.
    await stream.waitFor(() =>
      stream.activity().some((e) => e.type === 'tool_called' && e.tool_name === 'search_demo_tools'),
    );
    expect(stream.activity().filter((e) => e.tool_name === 'demo_check_job')).toEqual([]);
  });
});
