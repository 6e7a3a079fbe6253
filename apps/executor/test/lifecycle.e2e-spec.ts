import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXECUTOR_MAIN } from '../../../test/support/paths';
import { startExecutor } from '../../../test/support/executor-process';
import { alive, descendants } from '../../../test/support/processes';
import { devToken, v2Client } from '../../../test/support/ts-clients';

describe('executor lifecycle', () => {
  it('after a restart an old session id answers "expired — start a new session", never a crash', async () => {
    const first = await startExecutor();
    const c1 = await v2Client(first.mcpUrl, 'auto');
    const created = await c1.call('execute_demo_code', { code: 'x = 1' });
    await c1.close();
    expect(await first.stop()).toBe(0);

    const second = await startExecutor({ dataDir: first.dataDir, port: first.port });
    const c2 = await v2Client(second.mcpUrl, 'auto');
    const r = await c2.call('execute_demo_code', { code: 'x', execution_session_id: created.json.session_id });
    const fresh = await c2.call('execute_demo_code', { code: '1 + 1' });
    await c2.close();
    await second.stop();
    expect(r.json.success).toBe(false);
    expect(r.json.error).toContain(`Session ${created.json.session_id as string} has expired (the executor restarted)`);
    expect(r.json.error).toContain('Start a new session');
    expect(fresh.json.stdout).toBe('2\n');
  });

  it('SIGTERM reaps every kernel process, including their children', async () => {
    const ex = await startExecutor();
    const c = await v2Client(ex.mcpUrl, 'auto');
    for (let i = 0; i < 3; i++)
      await c.call('execute_demo_code', { code: "import subprocess\np = subprocess.Popen(['sleep', '300'])" });
    await c.close();
    // Kernels live in pid namespaces: find them (and their sleeps) from the host side.
    const pids = descendants(ex.proc.pid!);
    expect(pids.filter((p) => readFileSync(`/proc/${p}/cmdline`, 'utf8').startsWith('sleep')).length).toBe(3);
    expect(await ex.stop('SIGTERM')).toBe(0);
    expect(pids.filter(alive)).toEqual([]);
  });

  it('refuses to bind a non-loopback address with no-op auth, naming both ways to acknowledge it', () => {
    const res = spawnSync(
      process.execPath,
      [EXECUTOR_MAIN, '--config', 'examples/servers/demo/server.yaml', '--host', '0.0.0.0', '--port', '0'],
      { encoding: 'utf8', timeout: 30_000 },
    );
    expect(res.status).not.toBe(0);
    expect(res.stderr).toContain('--allow-unauthenticated-remote');
    expect(res.stderr).toContain('STOA_ALLOW_UNAUTHENTICATED_REMOTE=1');
  });

  it('refuses a port already in use with exit 2, naming the port and how to choose another', async () => {
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    const port = (taken.address() as { port: number }).port;
    const res = spawnSync(
      process.execPath,
      [EXECUTOR_MAIN, '--config', 'examples/servers/demo/server.yaml', '--port', String(port)],
      {
        encoding: 'utf8',
        timeout: 60_000,
        env: { ...process.env, STOA_DATA_DIR: mkdtempSync(join(tmpdir(), 'stoa-port-')), STOA_WARM_POOL: '0' },
      },
    );
    taken.close();
    expect(res.status).toBe(2);
    expect(res.stderr).toContain(`127.0.0.1:${port} is already in use`);
    expect(res.stderr).toContain('--port, PORT (connectors also CONNECTOR_PORT) or server.port');
  });

  it('reports every bad config key at once and exits non-zero', () => {
    const out = execFileSync(
      'sh',
      [
        '-c',
        `printf 'name: "bad name"\\nsessions:\\n  max_sessions: -1\\nexecution:\\n  default_timeout: 900\\n' > /tmp/stoa-bad.yaml; ${process.execPath} ${EXECUTOR_MAIN} --config /tmp/stoa-bad.yaml 2>&1; echo "exit=$?"`,
      ],
      { encoding: 'utf8' },
    );
    expect(out).toContain('name:');
    expect(out).toContain('sessions.max_sessions');
    expect(out).toContain('execution.default_timeout');
    expect(out).toContain('exit=2');
  });

  it('refuses to start with a clear message when Redis for jobs cannot be reached', () => {
    const res = spawnSync(
      process.execPath,
      [EXECUTOR_MAIN, '--config', 'examples/servers/demo/server.yaml', '--port', '0'],
      {
        encoding: 'utf8',
        timeout: 60_000,
        env: { ...process.env, REDIS_URL: 'redis://:hunter2@127.0.0.1:1', STOA_DATA_DIR: '/tmp/stoa-redis-down' },
      },
    );
    expect(res.status).not.toBe(0);
    expect(res.stderr).toContain('Cannot reach Redis at redis://:***@127.0.0.1:1');
    expect(res.stderr + res.stdout).not.toContain('hunter2');
  });

  it('writes one access-log line per request with request id and principal, never the token', async () => {
    const ex = await startExecutor({ env: { LOG_LEVEL: 'info' } });
    const token = devToken('auditor');
    try {
      const c = await v2Client(ex.mcpUrl, 'auto', token);
      await c.call('demo_list_sessions', {});
      await c.close();
      const lines = ex
        .logs()
        .split('\n')
        .filter((l) => l.includes('"request completed"'));
      const mcp = lines
        .map((l) => JSON.parse(l) as { req: { url: string; id: string }; principal?: string; status: number })
        .filter((l) => l.req.url === '/mcp');
      expect(mcp.length).toBeGreaterThan(0);
      expect(mcp.every((l) => l.principal === 'auditor@tenant-a' && l.req.id.length > 0 && l.status === 200)).toBe(
        true,
      );
      expect(ex.logs()).not.toContain(token.split('.')[1] as string);
    } finally {
      await ex.stop();
    }
  });
});
