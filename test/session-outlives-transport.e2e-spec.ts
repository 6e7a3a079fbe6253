import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP_KINDS, startFleet, type Fleet } from './support/fleet';
import { pyCalls } from './support/py-client';
import { devToken } from './support/ts-clients';

/**
 * Issue 14 §2: a 2025-era client that leaves its `async with` (the Python SDK sends DELETE) and connects again
 * resumes its kernel by execution_session_id — directly and through every connector.
 */
describe('an execution session outlives the 2025-era MCP session that created it (real processes, Python mcp client)', () => {
  let fleet: Fleet;
  const token = devToken('resumer');

  beforeAll(async () => {
    fleet = await startFleet();
  });
  afterAll(async () => {
    await fleet?.stop();
  });

  for (const kind of APP_KINDS) {
    it(`resumes the kernel on a new connection after the first one ended (${kind})`, async () => {
      const { mcpUrl } = fleet.target(kind);
      const [first] = await pyCalls(mcpUrl, 'legacy', [{ tool: 'execute_demo_code', args: { code: 'x = 41' } }], {
        token,
      });
      expect(first?.json.success).toBe(true);
      const sid = first?.json.session_id;
      expect(sid).toMatch(/^s-/);
      const [again] = await pyCalls(
        mcpUrl,
        'legacy',
        [{ tool: 'execute_demo_code', args: { code: 'x * 2', execution_session_id: sid } }],
        { token },
      );
      expect(again?.json).toMatchObject({ success: true, stdout: '82\n', session_id: sid });
    });
  }

  it('still closes the kernel when the client asks for it with close_session', async () => {
    const { mcpUrl } = fleet.target('executor');
    const [made] = await pyCalls(mcpUrl, 'legacy', [{ tool: 'execute_demo_code', args: { code: 'y = 1' } }], { token });
    const sid = made?.json.session_id;
    const [, after] = await pyCalls(
      mcpUrl,
      'legacy',
      [
        { tool: 'demo_close_session', args: { session_id: sid } },
        { tool: 'execute_demo_code', args: { code: 'y', execution_session_id: sid } },
      ],
      { token },
    );
    expect(after?.text).toMatch(/was closed|not found/);
  });
});
