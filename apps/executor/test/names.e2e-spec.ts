import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startExecutor, type RunningExecutor } from '../../../test/support/executor-process';
import { ROOT } from '../../../test/support/paths';
import { pyCalls } from '../../../test/support/py-client';
import { startRouter, type RunningRouter } from '../../../test/support/router-process';
import { devToken, v2Client, type TestClient } from '../../../test/support/ts-clients';

const DEMO = join(ROOT, 'examples', 'servers', 'demo');
/** The demo's domain (stdlib only) and sandbox (no bubblewrap needed) under a hyphenated server name. */
const hyphenated = (name: string) => ({
  name,
  tools: { manifest: join(DEMO, 'tools.yaml') },
  skills: { dir: join(DEMO, 'skills') },
  sandbox: { network: 'inherit', filesystem: 'host' },
  sessions: { warm_pool: 1 },
});

describe('hyphenated server names from the seed docs (science-hub)', () => {
  let executor: RunningExecutor;
  let router: RunningRouter;
  let client: TestClient;

  beforeAll(async () => {
    executor = await startExecutor({ config: hyphenated('geo-stats') });
    router = await startRouter({
      name: 'science-hub',
      upstreams: [{ name: 'geo-stats', url: executor.mcpUrl, auth: { mode: 'passthrough', audience: 'dev' } }],
    });
    client = await v2Client(executor.mcpUrl, 'auto', devToken('alice'));
  });
  afterAll(async () => {
    await client?.close();
    await router?.stop();
    await executor?.stop();
  });

  it('serves every meta-tool under the hyphenated executor name', async () => {
    const tools = await client.listTools();
    for (const t of [
      'execute_geo-stats_code',
      'search_geo-stats_tools',
      'load_geo-stats_skill',
      'plan_geo-stats_workflow',
      'geo-stats_check_job',
      'geo-stats_list_sessions',
      'geo-stats_close_session',
      'geo-stats_parallel_execute',
      'geo-stats_send',
    ]) {
      expect(tools).toContain(t);
    }
  });

  it('runs the domain functions and list_tools() inside a kernel of that server', async () => {
    const code =
      "rows = parse_csv('a,b\\n1,2\\n3,4')\nlist_tools()\nprint('mean', summarize_column(rows, 'a')['mean'])";
    const r = await client.call('execute_geo-stats_code', { code });
    expect(r.json.success).toBe(true);
    expect(r.json.stdout).toContain('summarize_column(rows');
    expect(r.json.stdout).toMatch(/mean 2(\.0)?\n$/);
  });

  it('answers the session and send tools named after it, and points agents at them by name', async () => {
    const run = await client.call('execute_geo-stats_code', { code: "open(agora_output('out.txt'), 'w').write('hi')" });
    expect(JSON.stringify(run.json)).toContain('geo-stats_send(data_ref=');
    const sessions = await client.call('geo-stats_list_sessions', {});
    expect(sessions.json.count).toBeGreaterThanOrEqual(1);
    const sent = await client.call('geo-stats_send', {
      data_ref: 'out.txt',
      to: 'user',
      session_id: run.json.session_id,
    });
    expect(sent.json).toMatchObject({ success: true, destination: 'user' });
  });

  it('serves search_science-hub_tools and proxies execute_geo-stats_code through a router named science-hub (Python mcp client)', async () => {
    const [search, run] = await pyCalls(
      router.mcpUrl,
      'auto',
      [
        { tool: 'search_science-hub_tools', args: { query: 'csv summary statistics', top: 3 } },
        { tool: 'execute_geo-stats_code', args: { code: "print(word_count('a b a')['total'])" } },
      ],
      { token: devToken('alice') },
    );
    expect((search?.json.tools as { name: string; to_access: string }[]).map((t) => t.to_access)).toContain(
      'Call via execute_geo-stats_code',
    );
    expect(run?.json).toMatchObject({ success: true, stdout: '3\n' });
  });
});

describe('config typos at start', () => {
  it('refuses to start on a misspelt key and names the key it meant', async () => {
    await expect(startExecutor({ config: { sessions: { max_sesions: 5 } } })).rejects.toThrow(
      /sessions\.max_sesions: unknown key; did you mean max_sessions\?/,
    );
  });
});
