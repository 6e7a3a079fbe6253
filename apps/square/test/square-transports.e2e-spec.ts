import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN } from '../../../test/support/admin';
import { type AppProcess, shutDown, spawnApp } from '../../../test/support/app-process';
import { freePort } from '../../../test/support/ports';
import { startRouter, until, type RunningRouter } from '../../../test/support/router-process';
import { pySquareAgent, SQUARE_MAIN, startSquare } from '../../../test/support/square-process';
import { devToken, v2Client, type TestClient } from '../../../test/support/ts-clients';

describe('square over stdio (the Python client starts it, as agents start the reference)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'stoa-square-stdio-'));
  const configFile = join(dir, 'square.yaml');
  writeFileSync(configFile, stringify({ data_dir: join(dir, 'data') }));
  let http: AppProcess | undefined;
  afterAll(() => shutDown(http));

  it.each(['auto', 'legacy'] as const)('round trip in the %s era: register, post, await, read', async (mode) => {
    const stdio = {
      command: process.execPath,
      args: [SQUARE_MAIN, '--stdio', '--config', configFile],
      env: { LOG_LEVEL: 'info' },
    };
    const r = await pySquareAgent({
      stdio,
      mode,
      name: `local-${mode}`,
      channel: `#stdio-${mode}`,
      posts: 2,
      expect: 2,
      calls: [{ tool: 'get_agent_by_name', args: { name: `local-${mode}` } }],
    });
    expect(r.messages).toEqual([
      [1, `local-${mode}:0`],
      [2, `local-${mode}:1`],
    ]);
    expect(r.calls[0]?.json).toMatchObject({ agent: { id: r.agent_id, name: `local-${mode}`, status: 'online' } });
  });

  it('is the same square as an HTTP square on the same database: the local agents are there', async () => {
    http = await spawnApp({ what: 'square', main: SQUARE_MAIN, configFile, port: await freePort() });
    const res = await fetch(`${http.url}/admin/v1/square/agents`, { headers: ADMIN });
    const { agents } = (await res.json()) as { agents: { name: string; principal: string }[] };
    expect(agents.map((a) => [a.name, a.principal])).toEqual([
      ['local-auto', 'dev-user@dev-tenant'],
      ['local-legacy', 'dev-user@dev-tenant'],
    ]);
  });
});

describe('a router lists a square as an upstream', () => {
  let square: AppProcess;
  let router: RunningRouter;
  let alice: TestClient;

  beforeAll(async () => {
    square = await startSquare();
    router = await startRouter({
      upstreams: [{ name: 'square', url: square.mcpUrl, auth: { mode: 'passthrough', audience: 'dev' } }],
    });
    alice = await v2Client(router.mcpUrl, 'auto', devToken('alice'));
  });
  afterAll(() => shutDown(alice, router, square));

  it('proxies the square’s tools with the caller’s identity and shows them in the router catalog', async () => {
    const tools = await alice.listTools();
    for (const t of ['register', 'chat_post_message', 'chat_await_update', 'board_put', 'lock_acquire', 'signal_wait'])
      expect(tools).toContain(t);
    const agentId = (await alice.call('register', { name: 'via-router' })).json.agent_id as string;
    expect((await alice.call('chat_post_message', { channel: '#routed', content: 'through the router' })).isError).toBe(
      false,
    );
    const [m] = (await alice.call('chat_read_messages', { channel: '#routed', limit: 1 })).json.messages as {
      agent_id: string;
    }[];
    expect(m?.agent_id).toBe(agentId);
    const agents = (await (await fetch(`${square.url}/admin/v1/square/agents`, { headers: ADMIN })).json()) as {
      agents: { name: string; principal: string }[];
    };
    expect(agents.agents).toEqual([expect.objectContaining({ name: 'via-router', principal: 'alice@tenant-a' })]);
    const catalog = (await (await fetch(`${router.url}/catalog`)).json()) as { mcp_tools: { name: string }[] };
    expect(catalog.mcp_tools.map((t) => t.name)).toEqual(
      expect.arrayContaining(['register', 'chat_await_update', 'lock_acquire']),
    );
  });

  it('indexes the square’s MCP tools in the router’s search; a hit is called by its name through the router', async () => {
    const found = (await alice.call('search_lab_tools', { query: 'wait until new messages arrive', top: 3 })).json
      .tools as { name: string; server_name: string; to_access: string }[];
    expect(found[0]).toMatchObject({
      name: 'chat_await_update',
      server_name: 'square',
      to_access: 'Call via chat_await_update',
    });
    const waited = alice.call('chat_await_update', { channel: '#found', timeout: 10, nmsg: 1 });
    await until('the wait at the square', async () => {
      const w = (await (await fetch(`${square.url}/admin/v1/square/waiters`, { headers: ADMIN })).json()) as {
        waiters: Record<string, number>;
      };
      return w.waiters['#found'] ? true : undefined;
    });
    await alice.call('chat_post_message', { channel: '#found', content: 'woken through the router' });
    const r = await waited;
    expect(r.isError).toBe(false);
    expect(r.json.messages).toEqual([expect.objectContaining({ content: 'woken through the router' })]);
  });
});
