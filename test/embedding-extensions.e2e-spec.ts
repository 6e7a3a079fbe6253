import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shutDown } from './support/app-process';
import { type RunningEmbedded, startEmbedded } from './support/embedded-process';
import { pyCalls } from './support/py-client';

// test/fixtures/guarded-executor.ts: hooks and identity of an embedding, through the Python MCP client.
describe('embedded executor: execution hooks, custom principal resolver, public URL', () => {
  let ex: RunningEmbedded | undefined;
  const as = (user: string) => ({ headers: { 'X-Internal-User': user } });

  beforeAll(async () => {
    ex = await startEmbedded('test/fixtures/guarded-executor.ts');
  });
  afterAll(() => shutDown(ex));

  it('runs the code as preprocess rewrote it and postprocess reshapes the result, but not its session id', async () => {
    const [r] = await pyCalls(
      ex!.mcpUrl,
      'auto',
      [{ tool: 'execute_guarded_code', args: { code: "print(__hooked__, 'SECRET')" } }],
      as('alice'),
    );
    expect(r!.json).toMatchObject({ success: true, stdout: 'True [redacted]\n' });
    expect(r!.json.session_id).not.toBe('somebody-else');
    const [again] = await pyCalls(
      ex!.mcpUrl,
      'auto',
      [{ tool: 'execute_guarded_code', args: { code: 'print(1)', execution_session_id: r!.json.session_id } }],
      as('alice'),
    );
    expect(again!.json).toMatchObject({ success: true, session_id: r!.json.session_id });
  });

  it('a validate hook that throws gives the agent a clear error, and the session stays usable', async () => {
    const [first, boom, after] = await pyCalls(
      ex!.mcpUrl,
      'auto',
      [
        { tool: 'execute_guarded_code', args: { code: 'kept = 7' } },
        { tool: 'execute_guarded_code', args: { code: 'BOOM_VALIDATE', execution_session_id: '{{0.session_id}}' } },
        { tool: 'execute_guarded_code', args: { code: 'print(kept)', execution_session_id: '{{0.session_id}}' } },
      ],
      as('alice'),
    );
    expect(boom!.json).toMatchObject({
      success: false,
      session_id: first!.json.session_id,
      error:
        "The guarded server's validate hook failed: the policy service timed out. Nothing ran and the session is unchanged. Adjust the code and try again in the same session, or ask the server's operator about the hook.",
    });
    expect(after!.json).toMatchObject({ success: true, stdout: '7\n' });
  });

  it('a postprocess hook that throws withholds the result, and the session keeps its state', async () => {
    const [first, boom, after] = await pyCalls(
      ex!.mcpUrl,
      'auto',
      [
        { tool: 'execute_guarded_code', args: { code: 'n = 1' } },
        {
          tool: 'execute_guarded_code',
          args: { code: "n += 1\nprint('BOOM_POST')", execution_session_id: '{{0.session_id}}' },
        },
        { tool: 'execute_guarded_code', args: { code: 'print(n)', execution_session_id: '{{0.session_id}}' } },
      ],
      as('alice'),
    );
    expect(boom!.json).toMatchObject({ success: false, stdout: '', session_id: first!.json.session_id });
    expect(boom!.json.error).toBe(
      "The guarded server's postprocess hook failed: the redaction service is down. The code ran (the session keeps its state), but its result is withheld. Adjust the code and try again in the same session, or ask the server's operator about the hook.",
    );
    expect(after!.json).toMatchObject({ success: true, stdout: '2\n' });
  });

  it('hooks see the caller and the session frozen: they cannot change the owner or the caller', async () => {
    const [r] = await pyCalls(
      ex!.mcpUrl,
      'auto',
      [{ tool: 'execute_guarded_code', args: { code: 'MUTATE_CTX' } }],
      as('alice'),
    );
    expect(r!.json.error).toBe(
      'context is frozen: 2 of 2 changes refused; owner alice@internal, caller alice@internal',
    );
  });

  it("answers someone else's session id exactly like an unknown id under the custom resolver", async () => {
    const [alice] = await pyCalls(
      ex!.mcpUrl,
      'auto',
      [{ tool: 'execute_guarded_code', args: { code: "secret = 'alice-only'" } }],
      as('alice'),
    );
    const aliceSession = alice!.json.session_id as string;
    const [foreign, unknown, list] = await pyCalls(
      ex!.mcpUrl,
      'auto',
      [
        { tool: 'execute_guarded_code', args: { code: 'print(secret)', execution_session_id: aliceSession } },
        { tool: 'execute_guarded_code', args: { code: 'print(secret)', execution_session_id: 's-nope' } },
        { tool: 'guarded_list_sessions', args: {} },
      ],
      as('bob'),
    );
    expect(foreign!.json.success).toBe(false);
    expect(foreign!.json.error).toBe(
      `Session ${aliceSession} not found. It may have expired or been cleaned up. Active sessions: 0`,
    );
    expect(unknown!.json.error).toBe((foreign!.json.error as string).replace(aliceSession, 's-nope'));
    expect(foreign!.text).not.toContain('alice-only');
    expect(list!.json).toMatchObject({ success: true, count: 0 });
    // Without the header the no-op mode decides (the dev principal): alice's session is just as unknown there.
    const [anon] = await pyCalls(ex!.mcpUrl, 'auto', [
      { tool: 'execute_guarded_code', args: { code: 'print(secret)', execution_session_id: aliceSession } },
    ]);
    expect(anon!.json.error).toBe(foreign!.json.error);
  });

  it('a resolver that throws answers 401 with its reason instead of guessing an identity', async () => {
    const res = await fetch(ex!.mcpUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'x-internal-user': 'broken',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(401);
    expect(await res.text()).toContain(
      "The server's identity resolver could not establish who you are: the internal directory is unreachable.",
    );
  });

  it('builds download links from the publicUrl extension', async () => {
    const [, sent] = await pyCalls(
      ex!.mcpUrl,
      'auto',
      [
        { tool: 'execute_guarded_code', args: { code: "open(agora_output('r.txt'), 'w').write('hi')" } },
        { tool: 'guarded_send', args: { data_ref: 'r.txt', to: 'user', execution_session_id: '{{0.session_id}}' } },
      ],
      as('alice'),
    );
    expect(sent!.json).toMatchObject({ success: true, destination: 'user' });
    expect(sent!.json.remote_uri).toMatch(/^https:\/\/files\.example\.test\/guarded\/artifacts\//);
  });

  it('resolves <blob> ids through the artifactResolver extension, under the same root rules as the catalog', async () => {
    writeFileSync(join(ex!.dir, 'data', 'datasets', 'report.csv'), 'year,total\n2026,42\n');
    const read = (id: string) => ({
      tool: 'execute_guarded_code',
      args: { code: `print(open("<blob>${id}</blob>").read().strip())` },
    });
    const [found, escape, unknown, flaky] = await pyCalls(
      ex!.mcpUrl,
      'legacy',
      [read('report-2026'), read('escape'), read('nobody-knows'), read('flaky')],
      as('alice'),
    );
    expect(found!.json).toMatchObject({ success: true, stdout: 'year,total\n2026,42\n' });
    // A resolver cannot widen what tags may read: a path outside the asset roots is refused like a <local> one.
    expect(escape!.json.success).toBe(false);
    expect(escape!.json.error).toContain("Failed to resolve asset '<blob>escape</blob>'");
    expect(escape!.text).not.toContain('root:');
    expect(unknown!.json.error).toContain("Blob artifact 'nobody-knows' is not in this server's data catalog.");
    expect(flaky!.json.success).toBe(false);
    expect(flaky!.json.error).toContain('the artifact index is unreachable');
  });
});
