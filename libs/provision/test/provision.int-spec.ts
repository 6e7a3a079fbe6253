import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assetSpecSchema, provisionAssets, type AssetSpec } from '../src/assets';
import { ensureEnvironment, environmentBuildSchema } from '../src/environment';
import { EnvironmentBuildError, EnvironmentNotReadyError } from '../src/provision.errors';
import { SidecarManager, sidecarListSchema, sidecarSchema, type SidecarSpec } from '../src/sidecars';

const PYTHON = '/usr/bin/python3';
const LOCAL_INDEX = '/opt/pypi/simple';
const root = mkdtempSync(join(tmpdir(), 'stoa-provision-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('ensureEnvironment (real venv and pip)', () => {
  const dataDir = join(root, 'data');
  const buildEnv = { ...process.env, ...(existsSync(LOCAL_INDEX) ? { PIP_INDEX_URL: `file://${LOCAL_INDEX}` } : {}) };
  const venv = (requirements: string, extra: Record<string, unknown> = {}) =>
    environmentBuildSchema.parse({ type: 'venv', python: PYTHON, requirements, ...extra });
  const ensure = (config: ReturnType<typeof venv>, env: NodeJS.ProcessEnv = buildEnv, log?: (m: string) => void) =>
    ensureEnvironment({ config, serverName: 'demo', dataDir, baseDir: root, env, log });
  const canImport = (python: string, module: string) => spawnSync(python, ['-c', `import ${module}`]).status === 0;

  it('returns the configured python unchanged for type system', async () => {
    const env = await ensure(environmentBuildSchema.parse({ python: '/opt/py/bin/python3' }));
    expect(env).toEqual({ python: '/opt/py/bin/python3', prefix: undefined, built: false });
  });

  it('builds a venv whose interpreter imports the requirement, logging each step', async () => {
    const logs: string[] = [];
    const env = await ensure(venv('six'), buildEnv, (m) => logs.push(m));
    expect(env.built).toBe(true);
    expect(env.prefix).toBe(join(dataDir, 'envs', 'demo', 'venv'));
    expect(env.python).toBe(join(dataDir, 'envs', 'demo', 'venv', 'bin', 'python'));
    expect(canImport(env.python, 'six')).toBe(true);
    expect(logs.some((l) => l.startsWith('create venv:'))).toBe(true);
    expect(logs.some((l) => l.startsWith('install requirements:'))).toBe(true);
  });

  it('reuses a complete environment without rebuilding', async () => {
    const started = Date.now();
    const env = await ensure(venv('six'));
    expect(env.built).toBe(false);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('rebuilds when the requirements change', async () => {
    const env = await ensure(venv('six\nidna'));
    expect(env.built).toBe(true);
    expect(canImport(env.python, 'idna')).toBe(true);
  });

  it('lets two concurrent builds of one directory take turns', async () => {
    const config = venv('six', { build_dir: 'shared-env' });
    const [a, b] = await Promise.all([ensure(config), ensure(config)]);
    expect([a.built, b.built].sort()).toEqual([false, true]);
    expect(a.prefix).toBe(join(root, 'shared-env'));
    expect(canImport(a.python, 'six')).toBe(true);
    expect(existsSync(join(root, 'shared-env.lock'))).toBe(false);
  });

  it('reports a failing additional command in the reference format', async () => {
    const config = venv('', {
      build_dir: join(root, 'cmd-env'),
      additional_commands: ['true', 'echo boom >&2; exit 3'],
    });
    await expect(ensure(config)).rejects.toThrow(
      "Additional command 2/2 failed (exit=3): 'echo boom >&2; exit 3'\nboom",
    );
  });

  it("reports a failed install with pip's stderr", async () => {
    const err: unknown = await ensure(venv('no-such-package-stoa-test', { build_dir: join(root, 'bad-env') })).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(EnvironmentBuildError);
    expect((err as Error).message).toContain("Environment build step 'install requirements' failed (exit=1)");
    expect((err as Error).message).toMatch(/no matching distribution/i);
  });

  it('refuses to build a missing environment when auto_build is disabled', async () => {
    const config = venv('six', { build_dir: join(root, 'absent-env'), auto_build: false });
    const err: unknown = await ensure(config).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EnvironmentNotReadyError);
    expect((err as Error).message).toContain(
      `Python environment not found at ${join(root, 'absent-env', 'bin', 'python')} and auto_build is disabled.`,
    );
  });

  it('names the missing tool for types uv and conda', async () => {
    const noTools = { ...buildEnv, PATH: mkdtempSync(join(root, 'empty-path-')) };
    const uv = environmentBuildSchema.parse({ type: 'uv', requirements: 'six' });
    const conda = environmentBuildSchema.parse({ type: 'conda', requirements: 'dependencies: [python]' });
    await expect(ensure(uv, noTools)).rejects.toThrow('environment.type uv needs the `uv` executable on PATH');
    await expect(ensure(conda, noTools)).rejects.toThrow('environment.type conda needs `mamba` or `conda` on PATH');
  });

  it('rejects requirements for type system in the schema', () => {
    const parsed = environmentBuildSchema.safeParse({ type: 'system', requirements: 'six' });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.message).toContain('set type: venv, uv or conda');
  });
});

describe('provisionAssets (local HTTP server and files)', () => {
  const good = Buffer.from('hello asset\n');
  const goodSha = createHash('sha256').update(good).digest('hex');
  const hits = new Map<string, number>();
  let server: Server;
  let base = '';
  const cacheDir = join(root, 'cache');
  const opts = { cacheDir, baseDir: root, retryBackoffMs: [10, 10] };
  const asset = (fields: Partial<AssetSpec> & { source: string; destination: string }): AssetSpec =>
    assetSpecSchema.parse({ name: 'a', ...fields });

  beforeAll(async () => {
    server = createServer((req, res) => {
      const n = (hits.get(req.url ?? '') ?? 0) + 1;
      hits.set(req.url ?? '', n);
      if (req.url === '/good.bin') res.end(good);
      else if (req.url === '/flaky.bin') res.end(n === 1 ? 'wrong bytes' : good);
      else res.writeHead(404).end('not here');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('downloads an http asset, verifies its checksum and leaves no temp file', async () => {
    const [done] = await provisionAssets(
      [asset({ source: `${base}/good.bin`, destination: 'http/good.bin', checksum: goodSha })],
      opts,
    );
    expect(done).toEqual({ name: 'a', path: join(cacheDir, 'http', 'good.bin'), status: 'fetched' });
    expect(readFileSync(join(cacheDir, 'http', 'good.bin'))).toEqual(good);
    expect(readdirSync(join(cacheDir, 'http'))).toEqual(['good.bin']);
  });

  it('retries after a checksum mismatch and keeps the right bytes', async () => {
    const [done] = await provisionAssets(
      [asset({ source: `${base}/flaky.bin`, destination: 'flaky.bin', checksum: goodSha })],
      opts,
    );
    expect(done?.status).toBe('fetched');
    expect(readFileSync(join(cacheDir, 'flaky.bin'))).toEqual(good);
    expect(hits.get('/flaky.bin')).toBe(2);
  });

  it('gives up on a permanent 404 after 3 attempts', async () => {
    const spec = asset({ name: 'gone', source: `${base}/missing`, destination: 'gone.bin' });
    await expect(provisionAssets([spec], opts)).rejects.toThrow(
      `Failed to provision asset 'gone' after 3 attempts: GET ${base}/missing answered HTTP 404 Not Found`,
    );
    expect(hits.get('/missing')).toBe(3);
    expect(existsSync(join(cacheDir, 'gone.bin'))).toBe(false);
  });

  it('copies file:// and ./-relative sources', async () => {
    mkdirSync(join(root, 'src-files'), { recursive: true });
    writeFileSync(join(root, 'src-files', 'data.csv'), 'x,y\n1,2\n');
    const done = await provisionAssets(
      [
        asset({
          name: 'url',
          source: pathToFileURL(join(root, 'src-files', 'data.csv')).href,
          destination: 'copies/url.csv',
        }),
        asset({ name: 'rel', source: './src-files/data.csv', destination: 'copies/rel.csv' }),
      ],
      opts,
    );
    expect(done.map((d) => d.status)).toEqual(['fetched', 'fetched']);
    expect(readFileSync(join(cacheDir, 'copies', 'url.csv'), 'utf8')).toBe('x,y\n1,2\n');
    expect(readFileSync(join(cacheDir, 'copies', 'rel.csv'), 'utf8')).toBe('x,y\n1,2\n');
  });

  it('skips an existing file whose checksum matches without contacting the source', async () => {
    const spec = asset({ source: `${base}/good.bin`, destination: 'skip/good.bin', checksum: goodSha });
    await provisionAssets([spec], opts);
    const before = hits.get('/good.bin');
    const [done] = await provisionAssets([spec], opts);
    expect(done?.status).toBe('cached');
    expect(hits.get('/good.bin')).toBe(before);
  });

  it('fetches again when the existing file does not match the checksum', async () => {
    mkdirSync(join(cacheDir, 'stale'), { recursive: true });
    writeFileSync(join(cacheDir, 'stale', 'good.bin'), 'corrupted');
    const [done] = await provisionAssets(
      [asset({ source: `${base}/good.bin`, destination: 'stale/good.bin', checksum: goodSha })],
      opts,
    );
    expect(done?.status).toBe('fetched');
    expect(readFileSync(join(cacheDir, 'stale', 'good.bin'))).toEqual(good);
  });

  it('refuses destinations outside the cache dir', () => {
    const escape = assetSpecSchema.safeParse({
      name: 'x',
      source: `${base}/good.bin`,
      destination: 'sub/../../etc/passwd',
    });
    const absolute = assetSpecSchema.safeParse({ name: 'x', source: `${base}/good.bin`, destination: '/etc/passwd' });
    expect(escape.error?.issues[0]?.message).toContain(
      "must name a file inside the asset cache dir (got 'sub/../../etc/passwd')",
    );
    expect(absolute.error?.issues[0]?.message).toContain("must be relative to the asset cache dir (got '/etc/passwd')");
  });

  it('refuses Azure blob and unknown sources naming the asset', async () => {
    const blob = { name: 'lake', source: 'abfss://c@acct.dfs.core.windows.net/x.parquet', destination: 'x.parquet' };
    expect(assetSpecSchema.safeParse(blob).error?.issues[0]?.message).toContain(
      "Azure blob sources are not supported yet (asset 'lake'",
    );
    await expect(provisionAssets([blob], opts)).rejects.toThrow(
      "Asset 'lake': Azure blob sources are not supported yet",
    );
    const ftp = { name: 'old', source: 'ftp://host/x', destination: 'x' };
    await expect(provisionAssets([ftp], opts)).rejects.toThrow(
      "Unsupported asset source 'ftp://host/x' for asset 'old'",
    );
  });
});

describe('SidecarManager (real Python sidecars)', () => {
  const dir = join(root, 'sidecars');
  const script = join(dir, 'health_server.py');
  const baseEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
  const startOpts = { python: PYTHON, baseEnv, cwd: root, pollIntervalMs: 100 };
  const manager = new SidecarManager();
  const freePort = async (): Promise<number> => {
    const srv = createNetServer();
    await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
    const { port } = srv.address() as AddressInfo;
    await new Promise((resolve) => srv.close(resolve));
    return port;
  };
  const spec = async (fields: Partial<SidecarSpec> & { name: string }): Promise<SidecarSpec> =>
    sidecarSchema.parse({ command: [script, '0.3'], url_env_var: 'SIDECAR_URL', port: await freePort(), ...fields });
  const groupAlive = (pid: number) => {
    try {
      process.kill(-pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  const pidFrom = (file: string) => Number(readFileSync(file, 'utf8'));

  beforeAll(() => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      script,
      [
        'import http.server, json, os, sys, time',
        "if os.environ.get('PID_FILE'): open(os.environ['PID_FILE'], 'w').write(str(os.getpid()))",
        'time.sleep(float(sys.argv[1]))',
        'class H(http.server.BaseHTTPRequestHandler):',
        '    def do_GET(self):',
        "        body = json.dumps({'pid': os.getpid(), 'greeting': os.environ.get('GREETING')}).encode()",
        "        self.send_response(200 if self.path == '/health' else 404)",
        "        self.send_header('Content-Length', str(len(body)))",
        '        self.end_headers()',
        '        self.wfile.write(body)',
        '    def log_message(self, *args): pass',
        "http.server.HTTPServer((os.environ['SIDECAR_HOST'], int(os.environ['SIDECAR_PORT'])), H).serve_forever()",
      ].join('\n'),
    );
  });
  afterAll(() => manager.stop());

  it('starts a sidecar with its env and reserved port, then stops its process group', async () => {
    const s = await spec({ name: 'demo', url_env_var: 'DEMO_URL', env: { GREETING: 'hi', SIDECAR_PORT: '1' } });
    const urls = await manager.start([s], startOpts);
    expect(urls).toEqual({ DEMO_URL: `http://127.0.0.1:${s.port}` });
    const health = (await (await fetch(`${urls.DEMO_URL}/health`)).json()) as { pid: number; greeting: string };
    expect(health.greeting).toBe('hi');
    expect(groupAlive(health.pid)).toBe(true);
    await manager.stop();
    expect(groupAlive(health.pid)).toBe(false);
  });

  it('reports a sidecar that exits during startup and stops the ones already started', async () => {
    const pidFile = join(dir, 'first.pid');
    const first = await spec({ name: 'first', env: { PID_FILE: pidFile } });
    const quitter = await spec({
      name: 'quitter',
      url_env_var: 'Q_URL',
      command: ['-c', "import sys; sys.stderr.write('bad config\\n'); sys.exit(3)"],
    });
    const err: unknown = await manager.start([first, quitter], startOpts).catch((e: unknown) => e);
    expect((err as Error).message).toContain(
      "Sidecar 'quitter' exited during startup with code 3 before its health endpoint became ready.",
    );
    expect((err as Error).message).toContain('bad config');
    expect(groupAlive(pidFrom(pidFile))).toBe(false);
  });

  it('times out a sidecar that never becomes healthy and stops it', async () => {
    const pidFile = join(dir, 'sleeper.pid');
    const sleeper = await spec({
      name: 'sleeper',
      readiness_timeout_s: 1.5,
      command: [script, '60'],
      env: { PID_FILE: pidFile },
    });
    await expect(manager.start([sleeper], startOpts)).rejects.toThrow(
      `Sidecar 'sleeper' did not become ready at http://127.0.0.1:${sleeper.port}/health within 1.5s (last error: ECONNREFUSED)`,
    );
    expect(groupAlive(pidFrom(pidFile))).toBe(false);
  });

  it('refuses a missing executable', async () => {
    const s = await spec({ name: 'ghost', use_env_python: false, command: ['/nonexistent/stoa-sidecar'] });
    await expect(manager.start([s], startOpts)).rejects.toThrow(
      "Sidecar 'ghost' cannot start: '/nonexistent/stoa-sidecar' is not an executable path",
    );
  });

  it('refuses non-loopback hosts in the schema', () => {
    const base = { name: 'x', command: ['x'], url_env_var: 'X', port: 8080 };
    expect(sidecarSchema.safeParse({ ...base, host: '0.0.0.0' }).error?.issues[0]?.message).toContain(
      "Sidecar host must be loopback (got '0.0.0.0')",
    );
    expect(sidecarSchema.safeParse({ ...base, host: 'example.com' }).error?.issues[0]?.message).toContain(
      "Sidecar host must be a loopback IP address or 'localhost' (got 'example.com')",
    );
    expect(sidecarSchema.parse({ ...base, host: '::1', health_path: 'ready' }).health_path).toBe('/ready');
  });

  it('refuses duplicate sidecar names', async () => {
    const a = await spec({ name: 'same' });
    expect(sidecarListSchema.safeParse([a, a]).error?.issues[0]?.message).toContain("Duplicate sidecar name 'same'");
    await expect(manager.start([a, a], startOpts)).rejects.toThrow("Duplicate sidecar name 'same'");
  });
});
