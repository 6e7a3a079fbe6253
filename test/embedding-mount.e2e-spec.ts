import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shutDown } from './support/app-process';
import { type RunningEmbedded, startEmbedded } from './support/embedded-process';
import { pyCalls } from './support/py-client';
import { devToken } from './support/ts-clients';

/** A POST with a chosen Host header (fetch cannot set one). */
function postWithHost(port: number, path: string, host: string): Promise<{ status?: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, method: 'POST', headers: { host, 'content-type': 'application/json' } },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode, body }));
      },
    );
    req.on('error', reject);
    req.end('{}');
  });
}

// test/fixtures/mounted-executor.ts: `server.handler` mounted at /stoa of the embedder's own Express app.
describe('an embedded executor mounted in another Express app (server.handler)', () => {
  let ex: RunningEmbedded | undefined;
  let mcp = '';
  const alice = { token: devToken('alice') };
  const bob = { token: devToken('bob') };

  beforeAll(async () => {
    ex = await startEmbedded('test/fixtures/mounted-executor.ts', () => ({ LOG_LEVEL: 'info' }));
    mcp = `${ex.url}/stoa/mcp`;
  });
  afterAll(() => shutDown(ex));

  it('serves both protocol eras under the mount path, and a session keeps its state across them', async () => {
    const [set] = await pyCalls(mcp, 'auto', [{ tool: 'execute_mounted_code', args: { code: 'secret = 41' } }], alice);
    expect(set!.json).toMatchObject({ success: true });
    const sid = set!.json.session_id!;
    const [read] = await pyCalls(
      mcp,
      'legacy',
      [{ tool: 'execute_mounted_code', args: { code: 'secret + 1', execution_session_id: sid } }],
      alice,
    );
    expect(read!.json).toMatchObject({ success: true, stdout: '42\n', session_id: sid });
    // Another user gets the unknown-id answer for alice's session, in either era.
    for (const mode of ['auto', 'legacy'] as const) {
      const [theirs, unknown] = await pyCalls(
        mcp,
        mode,
        [
          { tool: 'execute_mounted_code', args: { code: 'secret', execution_session_id: sid } },
          { tool: 'execute_mounted_code', args: { code: 'secret', execution_session_id: `${sid.slice(0, -4)}zzzz` } },
        ],
        bob,
      );
      expect(theirs!.text.replaceAll(sid, '<id>')).toBe(unknown!.text.replaceAll(`${sid.slice(0, -4)}zzzz`, '<id>'));
    }
  });

  it('keeps the Host checks and the access log of the server it mounts', async () => {
    const foreign = await postWithHost(ex!.port, '/stoa/mcp', 'attacker.example');
    expect(foreign.status).toBe(403);
    expect(JSON.parse(foreign.body)).toMatchObject({ error: 'forbidden_host' });
    const lines = ex!
      .logs()
      .split('\n')
      .filter((l) => l.includes('"request completed"'))
      .map((l) => JSON.parse(l) as { req: { url: string }; principal?: string; status: number });
    expect(lines.some((l) => l.req.url === '/mcp' && l.principal === 'alice@tenant-a' && l.status === 200)).toBe(true);
  });
});
