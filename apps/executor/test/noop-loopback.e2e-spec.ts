import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { startExecutor, type RunningExecutor } from '../../../test/support/executor-process';
import { ROOT } from '../../../test/support/paths';
import { pyCalls } from '../../../test/support/py-client';

const DEMO = join(ROOT, 'examples', 'servers', 'demo');

/** The shipped demo config, with its relative paths made absolute (the test writes the file elsewhere). */
function demoConfig(): Record<string, unknown> {
  const c = parse(readFileSync(join(DEMO, 'server.yaml'), 'utf8')) as Record<string, unknown>;
  delete c.data_dir;
  delete c.server;
  return { ...c, tools: { manifest: join(DEMO, 'tools.yaml') }, skills: { dir: join(DEMO, 'skills') } };
}

/** Python that tries to reach `port` on loopback over TCP; prints "reached" or the error class. */
const probe = (port: number) =>
  [
    'import socket',
    's = socket.socket()',
    's.settimeout(2)',
    'try:',
    `    s.connect(('127.0.0.1', ${port})); print('reached')`,
    'except OSError as e:',
    '    print(type(e).__name__)',
  ].join('\n');

describe('loopback is no identity on a no-op server (demo config)', () => {
  let demo: RunningExecutor;
  let other: RunningExecutor;

  beforeAll(async () => {
    // No STOA_ADMIN_TOKEN: the server makes its own and writes it to a file.
    demo = await startExecutor({ config: demoConfig(), env: { STOA_ADMIN_TOKEN: '' } });
    other = await startExecutor({ config: { sandbox: { network: 'inherit', filesystem: 'host' } } });
  });
  afterAll(async () => {
    await Promise.all([demo?.stop(), other?.stop()]);
  });

  it('refuses the admin API to a loopback caller without the token, naming the 0600 file that holds it', async () => {
    const file = join(demo.dataDir, `executor-${demo.port}.admin-token`);
    const denied = await fetch(`${demo.url}/admin/v1/sessions`);
    expect(denied.status).toBe(403);
    expect(JSON.stringify(await denied.json())).toContain(file);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const token = readFileSync(file, 'utf8').trim();
    expect(token.length).toBeGreaterThanOrEqual(24);
    expect(demo.logs()).toContain(file);
    expect((await fetch(`${demo.url}/admin/v1/sessions`, { headers: { 'x-stoa-admin-token': token } })).status).toBe(
      200,
    );
    expect(
      (await fetch(`${demo.url}/admin/v1/sessions`, { headers: { 'x-stoa-admin-token': `${token}x` } })).status,
    ).toBe(403);
  });

  it("a demo kernel reaches neither its own server nor another no-op server's port on this host", async () => {
    const [own, foreign] = await pyCalls(demo.mcpUrl, 'auto', [
      { tool: 'execute_demo_code', args: { code: probe(demo.port) } },
      { tool: 'execute_demo_code', args: { code: probe(other.port), execution_session_id: '{{0.session_id}}' } },
    ]);
    expect(own!.json.success).toBe(true);
    expect(own!.json.stdout).not.toContain('reached');
    expect(foreign!.json.stdout).not.toContain('reached');
  });

  it('/health says which isolation the demo kernels got', async () => {
    const health = (await (await fetch(`${demo.url}/health`)).json()) as {
      sandbox: { network: string; isolation: string };
    };
    expect(health.sandbox.network).toBe('none');
    expect(health.sandbox.isolation).toMatch(/^(bubblewrap|unshare)/);
  });
});
