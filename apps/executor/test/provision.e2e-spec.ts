import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { startExecutor } from '../../../test/support/executor-process';
import { EXECUTOR_MAIN } from '../../../test/support/paths';
import { freePort } from '../../../test/support/ports';
import { v2Client } from '../../../test/support/ts-clients';
import { testSandbox } from '../../../test/support/sandbox';

const LOCAL_INDEX = '/opt/pypi/simple';
const pipEnv: Record<string, string> =
  existsSync(LOCAL_INDEX) && !process.env.PIP_INDEX_URL ? { PIP_INDEX_URL: `file://${LOCAL_INDEX}` } : {};

/** A world-readable scratch dir (kernels run as their own uid when tests run as root). */
function openDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  chmodSync(dir, 0o755);
  return dir;
}

/** Runs the executor CLI to completion (for --warm and start-up refusals). */
function runCli(config: Record<string, unknown>, args: string[], env: Record<string, string> = {}) {
  const dir = openDir('stoa-cli-');
  const file = join(dir, 'server.yaml');
  writeFileSync(file, stringify({ name: 'demo', data_dir: join(dir, 'data'), ...config }));
  const r = spawnSync(process.execPath, [EXECUTOR_MAIN, '--config', file, ...args], {
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    encoding: 'utf8',
    timeout: 300_000,
  });
  return { code: r.status, out: `${r.stdout}${r.stderr}`, dir };
}

describe('environments, assets and sidecars (reference §10)', () => {
  // The test sandbox: confined under bubblewrap where it runs, else what the demo gets on a machine without it.
  it('--warm builds a venv from the local wheel index and exits 0; the server then runs kernels in it', async () => {
    const dataDir = join(openDir('stoa-venv-'), 'data');
    const environment = { type: 'venv', python: '/usr/bin/python3', requirements: 'six\n' };
    const warm = runCli({ data_dir: dataDir, environment }, ['--warm'], pipEnv);
    expect(warm.out).toContain("✓ Environment 'demo' is warm and ready.");
    expect(warm.code).toBe(0);
    expect(existsSync(join(dataDir, 'envs', 'demo', 'venv', 'bin', 'python'))).toBe(true);

    const ex = await startExecutor({ dataDir, config: { environment, sandbox: testSandbox() }, env: pipEnv });
    const c = await v2Client(ex.mcpUrl, 'auto');
    try {
      const r = (
        await c.call('execute_demo_code', {
          code: 'import sys, six\nprint(sys.prefix.endswith("envs/demo/venv"), six.__name__)',
        })
      ).json;
      expect(r).toMatchObject({ success: true, stdout: 'True six\n' });
    } finally {
      await c.close();
      await ex.stop();
    }
  }, 300_000);

  it('uv and conda environments fail clearly when the tool is absent', () => {
    const noTools = openDir('stoa-path-');
    for (const type of ['uv', 'conda'] as const) {
      const r = runCli(
        { environment: { type, requirements: type === 'conda' ? 'dependencies: [python]\n' : 'six\n' } },
        ['--warm'],
        { PATH: noTools },
      ); // neither uv nor conda/mamba on PATH
      expect(r.code).not.toBe(0);
      expect(r.out).toMatch(type === 'uv' ? /uv.*not found|needs the `uv` executable/i : /conda.*not found|mamba/i);
    }
  });

  it('provisions a checksummed asset that kernels read through MCP_ASSET_CACHE_DIR', async () => {
    const src = openDir('stoa-asset-');
    const body = 'a,b\n1,2\n';
    writeFileSync(join(src, 'table.csv'), body);
    const checksum = createHash('sha256').update(body).digest('hex');
    const ex = await startExecutor({
      config: {
        assets: [
          { name: 'table', source: `file://${join(src, 'table.csv')}`, destination: 'data/table.csv', checksum },
        ],
        sandbox: testSandbox(),
      },
    });
    const c = await v2Client(ex.mcpUrl, 'auto');
    try {
      const r = (
        await c.call('execute_demo_code', {
          code: "import os\nprint(open(os.path.join(os.environ['MCP_ASSET_CACHE_DIR'], 'data/table.csv')).read(), end='')",
        })
      ).json;
      expect(r).toMatchObject({ success: true, stdout: body });
    } finally {
      await c.close();
      await ex.stop();
    }
    const bad = runCli(
      {
        assets: [
          { name: 'table', source: `file://${join(src, 'table.csv')}`, destination: 'x.csv', checksum: '0'.repeat(64) },
        ],
      },
      ['--warm'],
      { STOA_ASSET_RETRY_BACKOFF_MS: '10' },
    );
    expect(bad.code).not.toBe(0);
    expect(bad.out).toContain("Failed to provision asset 'table' after 3 attempts");
  });

  it('starts a loopback sidecar before kernels, exports its URL to them, and stops it on SIGTERM', async () => {
    const dir = openDir('stoa-sidecar-');
    mkdirSync(join(dir, 'bin'));
    writeFileSync(
      join(dir, 'bin', 'side.py'),
      [
        'import http.server, os',
        'class H(http.server.BaseHTTPRequestHandler):',
        '    def do_GET(self):',
        '        self.send_response(200); self.end_headers(); self.wfile.write(b"pong " + os.environ.get("GREETING", "").encode())',
        '    def log_message(self, *a): pass',
        'open(os.environ["PID_FILE"], "w").write(str(os.getpid()))',
        'http.server.HTTPServer(("127.0.0.1", int(os.environ["SIDECAR_PORT"])), H).serve_forever()',
      ].join('\n'),
    );
    const port = await freePort();
    const pidFile = join(dir, 'side.pid');
    const ex = await startExecutor({
      config: {
        sandbox: { ...testSandbox(), network: 'inherit' },
        sidecars: [
          {
            name: 'side',
            command: [join(dir, 'bin', 'side.py')],
            url_env_var: 'SIDE_URL',
            port,
            env: { GREETING: 'hi', PID_FILE: pidFile },
          },
        ],
      },
    });
    const c = await v2Client(ex.mcpUrl, 'auto');
    try {
      const r = (
        await c.call('execute_demo_code', {
          code: "import os, urllib.request\nprint(os.environ['SIDE_URL'], urllib.request.urlopen(os.environ['SIDE_URL'] + '/health').read().decode())",
        })
      ).json;
      expect(r).toMatchObject({ success: true, stdout: `http://127.0.0.1:${port} pong hi\n` });
    } finally {
      await c.close();
    }
    const pid = Number(readFileSync(pidFile, 'utf8'));
    expect(existsSync(`/proc/${pid}`)).toBe(true);
    expect(await ex.stop('SIGTERM')).toBe(0);
    expect(existsSync(`/proc/${pid}`) && !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ')).toBe(false);
  });

  it('refuses sidecars under network: none (kernels could not reach them), saying what to change', () => {
    const r = runCli({ sidecars: [{ name: 's', command: ['x'], url_env_var: 'S_URL', port: 9 }] }, []);
    expect(r.code).not.toBe(0);
    expect(r.out).toContain('sandbox.network: none');
  });
});
