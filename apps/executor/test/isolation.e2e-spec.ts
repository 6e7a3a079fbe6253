import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startExecutor, type RunningExecutor } from '../../../test/support/executor-process';
import { devToken, v2Client, type TestClient } from '../../../test/support/ts-clients';
import { ADMIN } from '../../../test/support/admin';

describe('two identities are isolated on every session tool', () => {
  let ex: RunningExecutor;
  let alice: TestClient;
  let bob: TestClient;
  let aliceSession: string;

  beforeAll(async () => {
    ex = await startExecutor();
    alice = await v2Client(ex.mcpUrl, 'auto', devToken('alice'));
    bob = await v2Client(ex.mcpUrl, 'auto', devToken('bob'));
    const r = await alice.call('execute_demo_code', { code: 'secret = "alice-only"' });
    aliceSession = r.json.session_id as string;
  });
  afterAll(async () => {
    await alice.close();
    await bob.close();
    await ex.stop();
  });

  it("answers someone else's session id on execute exactly like an unknown id", async () => {
    const foreign = await bob.call('execute_demo_code', { code: 'print(secret)', execution_session_id: aliceSession });
    const unknown = await bob.call('execute_demo_code', { code: 'print(secret)', execution_session_id: 's-nope' });
    expect(foreign.json.error).toBe(
      `Session ${aliceSession} not found. It may have expired or been cleaned up. Active sessions: 0`,
    );
    expect(unknown.json.error).toBe(
      'Session s-nope not found. It may have expired or been cleaned up. Active sessions: 0',
    );
    expect(foreign.json.success).toBe(false);
  });

  it('lists only the caller’s sessions', async () => {
    const a = await alice.call('demo_list_sessions', { summary_only: false });
    const b = await bob.call('demo_list_sessions', {});
    expect(a.json).toMatchObject({ success: true, count: 1 });
    expect((a.json.sessions as { user_identity: string }[])[0]?.user_identity).toBe('alice@tenant-a');
    expect(b.json).toMatchObject({ success: true, count: 0, sessions: [] });
  });

  it('get_session_info and inspect_session refuse a foreign id like an unknown one', async () => {
    const info = await bob.call('demo_get_session_info', { session_id: aliceSession });
    const infoUnknown = await bob.call('demo_get_session_info', { session_id: 's-unknown' });
    expect(info.json).toEqual({
      success: false,
      error: `Session not found: Session ${aliceSession} not found. It may have expired or been cleaned up. Active sessions: 0`,
    });
    expect(infoUnknown.json.error).toContain('Session s-unknown not found');
    const inspect = await bob.call('demo_inspect_session', { session_id: aliceSession });
    expect(inspect.json.error).toBe(
      `Session ${aliceSession} not found. It may have expired or been cleaned up. Active sessions: 0`,
    );
    expect(inspect.text).not.toContain('alice-only');
  });

  it('the owner can inspect her own namespace', async () => {
    const r = await alice.call('demo_inspect_session', { session_id: aliceSession });
    expect(r.json).toMatchObject({
      success: true,
      status: 'idle',
      namespace: { secret: { type: 'str', repr: "'alice-only'" } },
    });
  });

  it('close_session of a foreign id reports like an unknown id and leaves the session alive', async () => {
    const r = await bob.call('demo_close_session', { session_id: aliceSession });
    const unknown = await bob.call('demo_close_session', { session_id: 's-unknown' });
    expect(r).toMatchObject({
      isError: true,
      json: {
        success: false,
        error: `Session ${aliceSession} not found. It may have expired or been cleaned up. Active sessions: 0`,
      },
    });
    expect(unknown.json.error).toBe((r.json.error as string).replace(aliceSession, 's-unknown'));
    const still = await alice.call('execute_demo_code', { code: 'print(secret)', execution_session_id: aliceSession });
    expect(still.json.stdout).toBe('alice-only\n');
  });

  it('the owner closes her session; reusing its id then says it was closed', async () => {
    const r = await alice.call('demo_close_session', { session_id: aliceSession });
    expect(r.json).toMatchObject({ success: true, remaining_sessions: 0 });
    const after = await alice.call('execute_demo_code', { code: '1', execution_session_id: aliceSession });
    expect(after.json.error).toContain('was closed');
  });

  it('with no-op auth, the admin API answers loopback callers and sees every owner', async () => {
    const c = await v2Client(ex.mcpUrl, 'auto', devToken('dave'));
    await c.call('execute_demo_code', { code: 'pass' });
    await c.close();
    const res = await fetch(`${ex.url}/admin/v1/sessions?status=active`, { headers: ADMIN });
    const body = (await res.json()) as { sessions: { owner: string }[] };
    expect(res.status).toBe(200);
    expect(body.sessions.map((s) => s.owner)).toContain('dave@tenant-a');
    const bad = await fetch(`${ex.url}/admin/v1/sessions?status=weird`, { headers: ADMIN });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error_description: string }).error_description).toBe(
      "Unknown status 'weird'. Use one of: active, closed, expired.",
    );
  });

  it('with no-op auth, discovery documents describe an open resource', async () => {
    expect(await (await fetch(`${ex.url}/.well-known/oauth-protected-resource`)).json()).toEqual({
      resource: ex.url,
      authorization_servers: [],
      bearer_methods_supported: ['header'],
    });
    const as = (await (await fetch(`${ex.url}/.well-known/oauth-authorization-server`)).json()) as { issuer: string };
    expect(as.issuer).toBe(ex.url);
  });
});
