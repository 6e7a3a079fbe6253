import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisAvailable, TEST_REDIS_URL } from '../../../test/support/databases';
import { startExecutor, type RunningExecutor } from '../../../test/support/executor-process';
import { ROOT } from '../../../test/support/paths';
import { startGateway, type RunningRouter } from '../../../test/support/router-process';
import { devToken, v2Client, type TestClient } from '../../../test/support/ts-clients';
import { ADMIN } from '../../../test/support/admin';

const DEMO = join(ROOT, 'examples', 'servers', 'demo');
const demoConfig = {
  tools: { manifest: join(DEMO, 'tools.yaml') },
  skills: { dir: join(DEMO, 'skills') },
  sessions: { warm_pool: 1 },
};
const passthrough = { mode: 'passthrough', audience: 'dev' };

interface AuditRow {
  principal: string;
  tool: string;
  outcome: string;
  decision: string;
  session_id: string | null;
  code_sha256: string | null;
  code: string | null;
  bytes_in: number;
  bytes_out: number;
}

describe('gateway: policy by tool name, domain-function policy in the kernel, audit (real processes)', () => {
  let demo: RunningExecutor;
  let gw: RunningRouter;
  let alice: TestClient;
  const audit = async (query: string) =>
    (
      (await (await fetch(`${gw.url}/admin/v1/audit?${query}`, { headers: ADMIN })).json()) as {
        records: AuditRow[];
        next_cursor: string | null;
      }
    ).records;

  beforeAll(async () => {
    demo = await startExecutor({ config: demoConfig });
    gw = await startGateway({
      upstream: { name: 'demo', url: demo.mcpUrl, auth: passthrough },
      policy: { blocked_tools: ['*_send', 'parallel_execute', 'demo_close_*'], blocked_functions: ['word_count'] },
    });
    alice = await v2Client(gw.mcpUrl, 'auto', devToken('alice'));
  });
  afterAll(async () => {
    await alice?.close();
    await gw?.stop();
    await demo?.stop();
  });

  it('lists only what the policy allows (globs and the reference families)', async () => {
    const tools = await alice.listTools();
    expect(tools).toContain('execute_demo_code');
    expect(tools).toContain('demo_list_sessions');
    for (const hidden of ['demo_parallel_execute', 'demo_check_batch', 'demo_cancel_batch', 'demo_close_session'])
      expect(tools).not.toContain(hidden);
  });

  it('refuses a blocked tool by name with the reference message, on both eras', async () => {
    const r = await alice.call('demo_close_session', { session_id: 'x' });
    expect(r.isError).toBe(true);
    expect(r.json.error).toBe("Tool 'demo_close_session' is blocked by gateway policy.");
    const legacy = await v2Client(gw.mcpUrl, 'legacy', devToken('alice'));
    try {
      expect(await legacy.listTools()).not.toContain('demo_close_session');
    } finally {
      await legacy.close();
    }
  });

  it('does not block code that merely contains the word "send"', async () => {
    const r = await alice.call('execute_demo_code', { code: 'note = "please send the report"\nprint(note)' });
    expect(r.json).toMatchObject({ success: true, stdout: 'please send the report\n' });
  });

  it('raises inside the kernel for a blocked domain function while the rest of the cell works', async () => {
    const code = [
      "rows = parse_csv('a,b\\n1,2\\n3,4')",
      'print(len(rows))',
      'try:',
      "    word_count('to be or not to be')",
      'except Exception as e:',
      "    print('refused:', e)",
      "print('still running')",
    ].join('\n');
    const r = await alice.call('execute_demo_code', { code });
    expect(r.json.success).toBe(true);
    expect(r.json.stdout).toContain('2\n');
    expect(r.json.stdout).toContain(
      "refused: Tool function 'word_count' is blocked by this server's policy (blocked_functions).",
    );
    expect(r.json.stdout).toContain('still running');
  });

  it("audits the session of a 2025-era client's execute call (the SDK path) as on the fast path", async () => {
    const erin = await v2Client(gw.mcpUrl, 'legacy', devToken('erin'));
    let sessionId: unknown;
    try {
      sessionId = (await erin.call('execute_demo_code', { code: '1' })).json.session_id;
    } finally {
      await erin.close();
    }
    const rows = await audit(`principal=${encodeURIComponent('erin@tenant-a')}`);
    expect(sessionId).toMatch(/^s-/);
    expect(rows.find((r) => r.tool === 'execute_demo_code')).toMatchObject({ outcome: 'ok', session_id: sessionId });
  });

  it('writes one audit row per call: allowed, denied and failed, code only as a hash', async () => {
    const bob = await v2Client(gw.mcpUrl, 'auto', devToken('bob'));
    try {
      const ok = await bob.call('execute_demo_code', { code: 'secret_value = 42' });
      await bob.call('demo_close_session', { session_id: String(ok.json.session_id) });
      await bob.call('demo_check_job', { job_id: 'j-does-not-exist' });
    } finally {
      await bob.close();
    }
    const rows = await audit(`principal=${encodeURIComponent('bob@tenant-a')}`);
    const by = (tool: string) => rows.find((r) => r.tool === tool);
    expect(by('execute_demo_code')).toMatchObject({
      outcome: 'ok',
      decision: 'allowed',
      code: null,
      code_sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(by('execute_demo_code')?.session_id).toMatch(/^s-/);
    expect(by('execute_demo_code')!.bytes_out).toBeGreaterThan(0);
    expect(by('demo_close_session')).toMatchObject({ outcome: 'denied', decision: 'blocked_tools: demo_close_*' });
    expect(by('demo_check_job')).toMatchObject({ outcome: 'tool_error', decision: 'allowed' });
    expect(JSON.stringify(rows)).not.toContain('secret_value');
    const denied = await audit('outcome=denied&limit=1');
    expect(denied).toHaveLength(1);
    const bad = await fetch(`${gw.url}/admin/v1/audit?since=yesterday`, { headers: ADMIN });
    expect(bad.status).toBe(400);
  });
});

// redisAvailable() throws under STOA_REQUIRE_SERVICES=1 when Redis is missing, and says why it skips otherwise.
describe.runIf(redisAvailable())('gateway rate limit shared by two replicas through Redis', () => {
  let demo: RunningExecutor;
  const gws: RunningRouter[] = [];

  beforeAll(async () => {
    demo = await startExecutor({ config: demoConfig });
    const name = `gw${randomUUID().slice(0, 8)}`; // replicas of one gateway share a name, hence a budget
    for (let i = 0; i < 2; i++)
      gws.push(
        await startGateway({
          name,
          upstream: { name: 'demo', url: demo.mcpUrl, auth: passthrough },
          policy: { max_calls_per_minute: 5 },
          redis_url: TEST_REDIS_URL,
        }),
      );
  });
  afterAll(async () => {
    await Promise.all(gws.map((g) => g.stop()));
    await demo?.stop();
  });

  it('refuses the 6th call in a minute across both replicas, with retry_after, per principal', async () => {
    const clients = await Promise.all(gws.map((g) => v2Client(g.mcpUrl, 'auto', devToken('carol'))));
    try {
      for (let i = 0; i < 5; i++) expect((await clients[i % 2]!.call('demo_list_sessions', {})).isError).toBe(false);
      const refused = await clients[1]!.call('demo_list_sessions', {});
      expect(refused.isError).toBe(true);
      expect(refused.json.error).toBe('Rate limit exceeded: maximum 5 calls per minute. Please wait and try again.');
      expect(refused.json.retry_after).toBeGreaterThanOrEqual(1);
      const other = await v2Client(gws[0]!.mcpUrl, 'auto', devToken('dave'));
      expect((await other.call('demo_list_sessions', {})).isError).toBe(false);
      await other.close();
      const rows = (await (
        await fetch(`${gws[1]!.url}/admin/v1/audit?outcome=rate_limited`, { headers: ADMIN })
      ).json()) as { records: AuditRow[] };
      expect(rows.records[0]).toMatchObject({ principal: 'carol@tenant-a', decision: 'max_calls_per_minute' });
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  });
});
