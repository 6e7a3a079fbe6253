import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startExecutor, type RunningExecutor } from '../../../test/support/executor-process';
import { pyCalls } from '../../../test/support/py-client';
import { devToken, v1Client, v2Client } from '../../../test/support/ts-clients';

const EXPECTED_TOOLS = [
  'execute_demo_code',
  'demo_list_sessions',
  'demo_get_session_info',
  'demo_close_session',
  'demo_inspect_session',
  'demo_check_job',
  'demo_parallel_execute',
  'demo_check_batch',
  'demo_cancel_batch',
  'demo_send',
];

describe('executor over real MCP clients', () => {
  let ex: RunningExecutor;
  beforeAll(async () => {
    ex = await startExecutor();
  });
  afterAll(async () => {
    await ex.stop();
  });

  it('Python mcp 2.3 in auto mode keeps state when it passes execution_session_id back', async () => {
    const r = await pyCalls(
      ex.mcpUrl,
      'auto',
      [
        { tool: 'execute_demo_code', args: { code: 'x = 41\nx + 1' } },
        { tool: 'execute_demo_code', args: { code: 'x * 2', execution_session_id: '{{1.session_id}}' } },
      ],
      { listTools: true },
    );
    expect(r[0]?.json.tools).toEqual(expect.arrayContaining(EXPECTED_TOOLS));
    expect(r[1]?.json).toMatchObject({ stdout: '42\n', success: true, error: null, tool_calls: [], artifacts: [] });
    expect(r[2]?.json).toMatchObject({ stdout: '82\n', success: true, session_id: r[1]?.json.session_id });
  });

  it('Python mcp 2.3 in legacy mode keeps state within its MCP session without passing an id', async () => {
    const r = await pyCalls(ex.mcpUrl, 'legacy', [
      { tool: 'execute_demo_code', args: { code: 'y = "kept"' } },
      { tool: 'execute_demo_code', args: { code: 'print(y)' } },
    ]);
    expect(r[1]?.json.stdout).toBe('kept\n');
    expect(r[1]?.json.session_id).toBe(r[0]?.json.session_id);
  });

  it('a stateless call without execution_session_id starts a new session each time', async () => {
    const r = await pyCalls(ex.mcpUrl, 'auto', [
      { tool: 'execute_demo_code', args: { code: 'z = 1' } },
      { tool: 'execute_demo_code', args: { code: "print('z' in globals())" } },
    ]);
    expect(r[1]?.json.stdout).toBe('False\n');
    expect(r[1]?.json.session_id).not.toBe(r[0]?.json.session_id);
  });

  it('a second connection (another client library) resumes the session by execution_session_id', async () => {
    const first = await v2Client(ex.mcpUrl, 'legacy');
    const created = await first.call('execute_demo_code', { code: 'shared = [1, 2, 3]' });
    await first.close();
    const second = await v1Client(ex.mcpUrl);
    const resumed = await second.call('execute_demo_code', {
      code: 'sum(shared)',
      execution_session_id: created.json.session_id,
    });
    await second.close();
    expect(resumed.json).toMatchObject({ stdout: '6\n', success: true, session_id: created.json.session_id });
  });

  it('the TS SDK v2 client negotiates 2026-07-28 and lists the core tools', async () => {
    const c = await v2Client(ex.mcpUrl, 'auto', devToken('ts-user'));
    const tools = await c.listTools();
    const r = await c.call('execute_demo_code', { code: 'import sys; sys.version_info[0]' });
    await c.close();
    expect(tools.sort()).toEqual([...EXPECTED_TOOLS].sort());
    expect(r.json.stdout).toBe('3\n');
  });

  it('the TS SDK v1 client keeps state in its 2025-era MCP session', async () => {
    const c = await v1Client(ex.mcpUrl);
    await c.call('execute_demo_code', { code: 'counter = 10' });
    const r = await c.call('execute_demo_code', { code: 'counter += 1\ncounter' });
    await c.close();
    expect(r.json.stdout).toBe('11\n');
  });

  it('names the session and batch a result refers to in _meta, beside the unchanged JSON text, for every client', async () => {
    for (const open of [
      () => v2Client(ex.mcpUrl, 'auto'),
      () => v2Client(ex.mcpUrl, 'legacy'),
      () => v1Client(ex.mcpUrl),
    ]) {
      const c = await open();
      try {
        const r = await c.call('execute_demo_code', { code: '1' });
        expect(r.meta?.['stoa/refs']).toEqual({ session_id: r.json.session_id });
        expect(r.text).toBe(JSON.stringify(r.json, null, 2));
        const b = await c.call('demo_parallel_execute', { code: 'result = n', inputs: [{ n: 1 }] });
        expect(b.meta?.['stoa/refs']).toEqual({ batch_id: b.json.batch_id });
      } finally {
        await c.close();
      }
    }
  });

  it('the execute description tells stateless clients to pass session_id back as execution_session_id', async () => {
    const c = await v2Client(ex.mcpUrl, 'auto');
    const description = await c.describeTool('execute_demo_code');
    await c.close();
    expect(description).toContain("pass a result's session_id back as execution_session_id");
  });
});
