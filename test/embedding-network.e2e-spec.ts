import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shutDown } from './support/app-process';
import { type RunningEmbedded, startEmbedded } from './support/embedded-process';
import { freePort } from './support/ports';
import { pyCalls } from './support/py-client';
import { devToken } from './support/ts-clients';

// examples/embedding/governed.ts: createExecutor ×2 → createDispatcher → createGateway, and createSquare, in one
// program as a user runs it, driven by the Python MCP client as two users.
describe('examples/embedding/governed.ts: gateway, dispatcher and square built in code', () => {
  let net: RunningEmbedded | undefined;
  let squareUrl = '';
  const alice = { token: devToken('alice') };
  const bob = { token: devToken('bob') };

  beforeAll(async () => {
    const squarePort = await freePort();
    squareUrl = `http://127.0.0.1:${squarePort}`;
    net = await startEmbedded('examples/embedding/governed.ts', () => ({ SQUARE_PORT: String(squarePort) }));
  });
  afterAll(() => shutDown(net));

  it.each(['legacy', 'auto'] as const)(
    'keeps a session across calls through gateway and dispatcher (%s client)',
    async (mode) => {
      const [tools, first, second] = await pyCalls(
        net!.mcpUrl,
        mode,
        [
          { tool: 'execute_calc_code', args: { code: 'x = 41' } },
          { tool: 'execute_calc_code', args: { code: 'print(x + 1)', execution_session_id: '{{1.session_id}}' } },
        ],
        { ...alice, listTools: true },
      );
      expect(tools!.json.tools).toContain('execute_calc_code');
      expect(first!.json).toMatchObject({ success: true });
      expect(second!.json).toMatchObject({ success: true, stdout: '42\n', session_id: first!.json.session_id });
    },
  );

  it("applies the gateway's policy: the blocked send tool is neither listed nor callable", async () => {
    const [tools, sent] = await pyCalls(
      net!.mcpUrl,
      'auto',
      [{ tool: 'calc_send', args: { data_ref: 'x', to: 'user' } }],
      { ...alice, listTools: true },
    );
    expect(tools!.json.tools).not.toContain('calc_send');
    expect(sent!.text).toContain('calc_send');
    expect(sent!.json.success).not.toBe(true);
  });

  it("answers alice's session id to bob exactly like an unknown id, through both hops", async () => {
    const [mine] = await pyCalls(
      net!.mcpUrl,
      'auto',
      [{ tool: 'execute_calc_code', args: { code: "secret = 'alice-only'" } }],
      alice,
    );
    const id = mine!.json.session_id as string;
    const [foreign, unknown] = await pyCalls(
      net!.mcpUrl,
      'legacy',
      [
        { tool: 'execute_calc_code', args: { code: 'print(secret)', execution_session_id: id } },
        { tool: 'execute_calc_code', args: { code: 'print(secret)', execution_session_id: 's-nonexistent' } },
      ],
      bob,
    );
    expect(foreign!.json.success).toBe(false);
    expect(foreign!.text).not.toContain('alice-only');
    expect(foreign!.json.error).toBe((unknown!.json.error as string).replace('s-nonexistent', id));
  });

  it('serves the square: agents register and share the board; the live view ships its files', async () => {
    const [registered, put, got] = await pyCalls(
      `${squareUrl}/mcp`,
      'auto',
      [
        { tool: 'register', args: { name: 'planner' } },
        { tool: 'board_put', args: { key: 'plan/step', value: { n: 1 } } },
        { tool: 'board_get', args: { key: 'plan/step' } },
      ],
      alice,
    );
    expect(registered!.json).toMatchObject({ name: 'planner' });
    expect(put!.json).toMatchObject({ version: 1 });
    expect(got!.json).toMatchObject({ entry: { key: 'plan/step', value: { n: 1 }, version: 1 } });
    for (const path of ['/live', '/live/static/live.js', '/live/static/live.css'])
      expect({ path, status: (await fetch(`${squareUrl}${path}`)).status }).toEqual({ path, status: 200 });
  });
});
