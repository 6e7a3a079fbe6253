import { existsSync, readFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BlobServiceClient } from '@azure/storage-blob';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAzurite, type Azurite } from '../../../test/support/azurite';
import { startExecutor, type RunningExecutor } from '../../../test/support/executor-process';
import { freePort } from '../../../test/support/ports';
import { pyCalls } from '../../../test/support/py-client';
import { startRouter, until } from '../../../test/support/router-process';
import { devToken, v2Client, type TestClient } from '../../../test/support/ts-clients';
import { ADMIN } from '../../../test/support/admin';

/** Two real executors (alpha → beta peer), a local export dir and a real Azurite blob emulator. */
describe('send, download links and object transfer', () => {
  let azurite: Azurite;
  let alpha: RunningExecutor;
  let beta: RunningExecutor;
  let a: TestClient; // alice on alpha
  let b: TestClient; // alice on beta
  let mallory: TestClient; // someone else on beta
  const exportDir = mkdtempSync(join(tmpdir(), 'stoa-exports-'));
  const exec = async (c: TestClient, code: string, sid?: string) =>
    (await c.call('execute_alpha_code', { code, ...(sid ? { execution_session_id: sid } : {}) })).json;
  const execBeta = async (c: TestClient, code: string, sid?: string) =>
    (await c.call('execute_beta_code', { code, ...(sid ? { execution_session_id: sid } : {}) })).json;
  const send = async (args: Record<string, unknown>) => (await a.call('alpha_send', args)).json;

  beforeAll(async () => {
    azurite = await startAzurite();
    const betaPort = await freePort();
    beta = await startExecutor({ port: betaPort, config: { name: 'beta' } });
    alpha = await startExecutor({
      config: {
        name: 'alpha',
        transfer: { link_ttl_seconds: 600 },
        publishers: {
          local: { base_dir: exportDir },
          blob: { connection_string: azurite.connectionString, container: 'exports' },
          servers: [{ name: 'faraway', url: 'http://faraway.example.com:8000' }],
        },
        peers: { alpha: 'http://127.0.0.1:1', beta: `http://127.0.0.1:${betaPort}/mcp` },
      },
    });
    a = await v2Client(alpha.mcpUrl, 'auto', devToken('alice'));
    b = await v2Client(beta.mcpUrl, 'auto', devToken('alice'));
    mallory = await v2Client(beta.mcpUrl, 'auto', devToken('mallory'));
  });
  afterAll(async () => {
    await Promise.all([a, b, mallory].map((c) => c?.close()));
    await Promise.all([alpha, beta].map((e) => e?.stop()));
    await azurite?.stop();
  });

  it('lists destinations in the description and refuses unknown ones with the reference message', async () => {
    expect(await a.describeTool('alpha_send')).toContain(
      "Available destinations: 'user', 'local', 'blob', 'faraway', 'beta'.",
    );
    const r = (await a.call('alpha_send', { data_ref: 'x', to: 'mars' })).json;
    expect(r).toEqual({
      success: false,
      error: "Unknown destination 'mars'. Available destinations: ['user', 'local', 'blob', 'faraway', 'beta']",
    });
  });

  it('lists path only beside a storage destination and session_id only beside a server one; reference-style calls still work', async () => {
    expect(Object.keys((await a.inputSchemaOf('alpha_send'))?.properties ?? {})).toEqual([
      'data_ref',
      'to',
      'name',
      'path',
      'session_id',
      'execution_session_id',
    ]);
    // beta has only 'user': no path, no session_id, and no storage or server wording.
    expect(Object.keys((await b.inputSchemaOf('beta_send'))?.properties ?? {})).toEqual([
      'data_ref',
      'to',
      'name',
      'execution_session_id',
    ]);
    const description = await b.describeTool('beta_send');
    expect(description).toContain(
      "Send data out of this beta session: to the user (download link).\nAvailable destinations: 'user'.",
    );
    expect(description).not.toMatch(/storage|server destinations|session_id=/);
    // A reference client passes all five parameters (nulls included): the ones not listed are accepted and ignored.
    const calls = [
      { tool: 'execute_beta_code', args: { code: "open(agora_output('ref.txt'), 'w').write('reference')" } },
      {
        tool: 'beta_send',
        args: { data_ref: 'ref.txt', to: 'user', name: null, path: null, session_id: null },
      },
    ];
    for (const mode of ['legacy', 'auto'] as const) {
      const [made, sent] = await pyCalls(beta.mcpUrl, mode, calls, { token: devToken(`ref-${mode}`) });
      expect(made?.json.success).toBe(true);
      expect(sent?.json).toMatchObject({ success: true, destination: 'user', name: 'ref.txt' });
      expect(await (await fetch(sent?.json.remote_uri as string)).text()).toBe('reference');
    }
  });

  it("'user' gives a signed, expiring link to an output file; tampered, foreign or unknown links answer 404", async () => {
    const s = await exec(a, "open(agora_output('report.csv'), 'w').write('a,b\\n1,2\\n')");
    expect(s.artifacts).toEqual([{ name: 'report.csv', size_bytes: 8, mime_type: 'text/csv' }]);
    const r = await send({ data_ref: 'report.csv', to: 'user', execution_session_id: s.session_id });
    expect(r).toMatchObject({ success: true, destination: 'user', name: 'report.csv', size_bytes: 8 });
    expect(r.remote_uri).toMatch(
      new RegExp(`^${alpha.url}/artifacts/${s.session_id}/[0-9a-z]+\\.[A-Za-z0-9_-]{32}/report\\.csv$`),
    );
    expect(Date.parse(r.expires_at as string) - Date.now()).toBeGreaterThan(500_000);
    const ok = await fetch(r.remote_uri as string);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(await ok.text()).toBe('a,b\n1,2\n');

    const url = r.remote_uri as string;
    const other = await exec(a, "open(agora_output('report.csv'), 'w').write('secret')");
    const notFound = { error: 'artifact not found' };
    const parts = url.split('/'); // http: '' host artifacts session token name
    const [expiry, mac] = (parts[5] as string).split('.') as [string, string];
    const withToken = (t: string) => [...parts.slice(0, 5), t, ...parts.slice(6)].join('/');
    const tampered = withToken(`${expiry}.${mac[0] === 'A' ? 'B' : 'A'}${mac.slice(1)}`);
    const stretched = withToken(`${(parseInt(expiry, 36) + 3600).toString(36)}.${mac}`);
    const foreign = url.replace(s.session_id as string, other.session_id as string);
    const renamed = url.replace(/report\.csv$/, 'other.csv');
    for (const bad of [tampered, stretched, foreign, renamed, `${alpha.url}/artifacts/nope/1.x/report.csv`]) {
      const res = await fetch(bad);
      expect({ bad, status: res.status }).toEqual({ bad, status: 404 });
      expect(await res.json()).toEqual(notFound);
    }
    // A variable is not a downloadable file.
    await exec(a, 'answer = 42', s.session_id);
    expect(await send({ data_ref: 'answer', to: 'user', execution_session_id: s.session_id })).toMatchObject({
      success: false,
      error:
        "Cannot send 'answer' to 'user': artifact must be a file in AGORA_OUTPUT_DIR (not a kernel variable) for GUI download.",
    });
  });

  it("'local' copies under {base}/{session}/{name} and refuses names that escape it", async () => {
    const s = await exec(a, "table = {'rows': [1, 2, 3]}\nopen(agora_output('notes.txt'), 'w').write('hello')");
    const file = await send({
      data_ref: 'notes.txt',
      to: 'local',
      path: 'sub/notes.txt',
      execution_session_id: s.session_id,
    });
    expect(file).toMatchObject({
      success: true,
      destination: 'local',
      name: 'sub/notes.txt',
      remote_uri: join(exportDir, s.session_id as string, 'sub/notes.txt'),
    });
    expect(readFileSync(file.remote_uri as string, 'utf8')).toBe('hello');
    const variable = await send({ data_ref: 'table', to: 'local', execution_session_id: s.session_id });
    expect(variable).toMatchObject({
      success: true,
      name: 'table',
      serializer: expect.stringMatching(/^(pickle|cloudpickle|dill)$/),
    });
    expect(existsSync(variable.remote_uri as string)).toBe(true);
    for (const path of ['../escape.txt', '/etc/cron.d/x', 'a/../../b', '..\\..\\win.txt']) {
      const r = await send({ data_ref: 'notes.txt', to: 'local', path, execution_session_id: s.session_id });
      expect({ path, success: r.success }).toEqual({ path, success: false });
      expect(r.error).toMatch(/absolute|'\.\.'/);
    }
    expect(existsSync(join(exportDir, 'escape.txt'))).toBe(false);
    // A symlink the kernel plants in its outputs cannot make the server read outside them.
    const planted = await exec(a, "import os\nos.symlink('/etc/hostname', agora_output('host.txt'))", s.session_id);
    expect(planted.success).toBe(true);
    expect(await send({ data_ref: 'host.txt', to: 'local', execution_session_id: s.session_id })).toMatchObject({
      success: false,
      error: expect.stringContaining("Cannot resolve 'host.txt'"),
    });
  });

  it('a kernel that swaps its output directory for a symlink to / cannot make the server list, serve or copy host files', async () => {
    const r = await exec(a, "import os, shutil\nshutil.rmtree(AGORA_OUTPUT_DIR)\nos.symlink('/', AGORA_OUTPUT_DIR)");
    expect(r).toMatchObject({ success: true, artifacts: [] });
    for (const to of ['user', 'local', 'blob']) {
      const sent = await send({ data_ref: 'etc/hostname', to, execution_session_id: r.session_id });
      expect({ to, success: sent.success }).toEqual({ to, success: false });
      expect(sent.error).toContain("Cannot resolve 'etc/hostname'");
    }
  });

  it("'blob' uploads to {session}/{name} in the container (Azurite)", async () => {
    const s = await exec(a, "open(agora_output('plot.svg'), 'w').write('<svg/>')");
    const missing = await send({ data_ref: 'plot.svg', to: 'blob', execution_session_id: s.session_id });
    expect(missing.error).toBe(
      "Container 'exports' does not exist in storage account 'devstoreaccount1'. Check the container name, or ask the operator to create it.",
    );
    await BlobServiceClient.fromConnectionString(azurite.connectionString).getContainerClient('exports').create();
    const r = await send({ data_ref: 'plot.svg', to: 'blob', execution_session_id: s.session_id });
    expect(r.error).toBeUndefined();
    expect(r).toMatchObject({
      success: true,
      destination: 'blob',
      remote_uri: `${azurite.accountUrl}/exports/${s.session_id as string}/plot.svg`,
    });
    const blob = BlobServiceClient.fromConnectionString(azurite.connectionString)
      .getContainerClient('exports')
      .getBlobClient(`${s.session_id as string}/plot.svg`);
    expect((await blob.downloadToBuffer()).toString()).toBe('<svg/>');
    expect((await blob.getProperties()).contentType).toBe('image/svg+xml');
  });

  it('moves a numpy array, a dict, a stdlib class instance and ~10 MB into a peer session of the same user', async () => {
    const target = await execBeta(b, 'ready = True');
    const src = await exec(
      a,
      [
        'import numpy as np, fractions, collections',
        'arr = np.arange(12).reshape(3, 4)',
        "cfg = {'a': [1, 2], 'b': {'c': None}}",
        'frac = fractions.Fraction(3, 7)',
        'Point = collections.namedtuple("Point", "x y")',
        'big = np.random.default_rng(0).random(1_310_720)  # 10 MiB',
      ].join('\n'),
    );
    const sid = src.session_id as string;
    for (const [ref, name] of [
      ['arr', 'arr'],
      ['cfg', 'settings'],
      ['frac', 'frac'],
      ['big', 'big'],
    ]) {
      const r = await send({
        data_ref: ref,
        to: 'beta',
        name,
        session_id: target.session_id,
        execution_session_id: sid,
      });
      expect({ ref, success: r.success, error: r.error }).toEqual({ ref, success: true, error: undefined });
      expect(r.remote_uri).toMatch(new RegExp(`^Injected '${name}' into beta kernel`));
    }
    const check = await execBeta(
      b,
      "print(arr.sum(), settings['b'], frac, big.shape, round(float(big.sum()), 3))",
      target.session_id,
    );
    const local = await exec(a, 'print(round(float(big.sum()), 3))', sid);
    expect(check.stdout).toBe(`66 {'c': None} 3/7 (1310720,) ${(local.stdout as string).trim()}\n`);
  });

  it('an instance of a class defined in a cell travels by value when the kernel has cloudpickle or dill', async () => {
    const target = await execBeta(b, 'pass');
    const src = await exec(
      a,
      'class Point:\n    def __init__(self, x, y):\n        self.x, self.y = x, y\n    def norm(self):\n        return (self.x ** 2 + self.y ** 2) ** 0.5\npt = Point(3, 4)',
    );
    const r = await send({
      data_ref: 'pt',
      to: 'beta',
      session_id: target.session_id,
      execution_session_id: src.session_id,
    });
    if (r.serializer === 'pickle') {
      // Plain pickle sends the class by reference: the peer says what is missing and what to do.
      expect(r).toMatchObject({ success: false, error: expect.stringContaining("Can't get attribute 'Point'") });
    } else {
      expect(r).toMatchObject({ success: true, serializer: expect.stringMatching(/^(cloudpickle|dill)$/) });
      expect((await execBeta(b, 'print(type(pt).__name__, pt.norm())', target.session_id as string)).stdout).toBe(
        'Point 5.0\n',
      );
    }
  });

  it("without session_id the object lands in the caller's oldest session on the peer", async () => {
    const sessions = (await b.call('beta_list_sessions', {})).json as { sessions: { session_id: string }[] };
    const src = await exec(a, 'hello = "world"');
    const r = await send({ data_ref: 'hello', to: 'beta', execution_session_id: src.session_id });
    expect(r.success).toBe(true);
    const oldest = sessions.sessions[0]?.session_id as string;
    expect((await execBeta(b, 'hello', oldest)).stdout).toBe("'world'\n");
  });

  it('reports missing variables, invalid names, foreign sessions, and policy-refused hosts', async () => {
    const src = await exec(a, 'x = 1');
    const sid = src.session_id as string;
    const other = await execBeta(mallory, 'mine = 1');
    expect(await send({ data_ref: 'nope', to: 'beta', execution_session_id: sid })).toMatchObject({
      success: false,
      error: expect.stringContaining(
        "Cannot resolve 'nope': not found as a kernel variable or as a file in AGORA_OUTPUT_DIR.",
      ),
    });
    expect(await send({ data_ref: 'not-a-name', to: 'beta', execution_session_id: sid })).toMatchObject({
      success: false,
      error:
        "Server destination 'beta' requires a valid Python variable name as data_ref, but got 'not-a-name'. Use a kernel variable name.",
    });
    expect(await send({ data_ref: 'x', name: 'class', to: 'beta', execution_session_id: sid })).toMatchObject({
      success: false,
      error: "Invalid target variable name: 'class'. Must be a valid Python identifier.",
    });
    const foreign = await send({ data_ref: 'x', to: 'beta', session_id: other.session_id, execution_session_id: sid });
    expect(foreign).toMatchObject({
      success: false,
      error: `Peer 'beta' refused the object (HTTP 404): Session '${String(other.session_id)}' not found`, // as an unknown id
    });
    expect((await execBeta(mallory, "'x' in globals()", other.session_id as string)).stdout).toBe('False\n');
    const faraway = await send({ data_ref: 'x', to: 'faraway', execution_session_id: sid });
    expect(faraway.error).toMatch(
      /^Plain HTTP to 'faraway\.example\.com' is only permitted for loopback addresses \(localhost, 127\.0\.0\.1, ::1\) or explicitly trusted hosts\..*OBJECT_TRANSFER_TRUSTED_HTTP_HOSTS/,
    );
    const transfers = (await (
      await fetch(`${alpha.url}/admin/v1/transfers?owner=alice@tenant-a&limit=200`, { headers: ADMIN })
    ).json()) as { transfers: { kind: string; success: boolean; peer: string }[] };
    expect(transfers.transfers.some((t) => t.peer === 'faraway' && !t.success)).toBe(true);
    expect(transfers.transfers.some((t) => t.kind === 'blob' && t.success)).toBe(true);
    const received = (await (
      await fetch(`${beta.url}/admin/v1/transfers?direction=in&limit=200`, { headers: ADMIN })
    ).json()) as { transfers: { success: boolean; peer: string }[] };
    expect(received.transfers.filter((t) => t.success && t.peer === 'alpha').length).toBeGreaterThanOrEqual(5);
    const artifacts = (await (
      await fetch(`${alpha.url}/admin/v1/artifacts?owner=alice@tenant-a`, { headers: ADMIN })
    ).json()) as { artifacts: { name: string }[] };
    expect(artifacts.artifacts.map((x) => x.name)).toEqual(
      expect.arrayContaining(['report.csv', 'notes.txt', 'plot.svg']),
    );
  });

  it('POST /object-transfer/receive validates like the reference table', async () => {
    const post = async (body: string | object, headers: Record<string, string> = {}) => {
      const res = await fetch(`${beta.url}/object-transfer/receive`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${devToken('nobody')}`, ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const pickled = Buffer.from('80049503000000000000004b2a2e', 'hex').toString('base64'); // pickle of 42
    expect(await post('{nope')).toEqual({ status: 400, body: { success: false, error: 'Invalid JSON body' } });
    expect(await post({ variable_name: 1, data: 'x' })).toEqual({
      status: 400,
      body: { success: false, error: "'variable_name' and 'data' must be strings" },
    });
    expect(await post({ variable_name: '', data: pickled })).toEqual({
      status: 400,
      body: { success: false, error: "Missing required fields: 'variable_name' and 'data'" },
    });
    expect(await post({ variable_name: 'for', data: pickled })).toEqual({
      status: 400,
      body: { success: false, error: "Invalid Python variable name: 'for'" },
    });
    expect((await post({ variable_name: 'v', data: '@@@@' })).body.error).toMatch(/^Invalid base64 data: /);
    expect(await post({ variable_name: 'v', data: pickled, session_id: 's-unknown' })).toEqual({
      status: 404,
      body: { success: false, error: "Session 's-unknown' not found" },
    });
    expect(await post({ variable_name: 'v', data: pickled })).toEqual({
      status: 404,
      body: { success: false, error: 'No active session found to receive the object' },
    });
    const big = await fetch(`${beta.url}/object-transfer/receive`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': String(400 * 1024 * 1024) },
      body: '{}',
      duplex: 'half',
    }).then(
      (r) => r.status,
      () => 413,
    );
    expect(big).toBe(413);
    const mine = await execBeta(mallory, 'pass');
    const ok = await post(
      { variable_name: 'v', data: pickled, session_id: mine.session_id },
      { authorization: `Bearer ${devToken('mallory')}` },
    );
    expect(ok).toEqual({
      status: 200,
      body: {
        success: true,
        variable_name: 'v',
        session_id: mine.session_id,
        size_bytes: 14,
        serializer: expect.any(String),
      },
    });
    expect((await execBeta(mallory, 'v', mine.session_id as string)).stdout).toBe('42\n');
  });

  it('works through a router in front of both executors (TS v2 client)', async () => {
    const passthrough = { mode: 'passthrough', audience: 'dev' };
    const router = await startRouter({
      upstreams: [
        { name: 'alpha', url: alpha.mcpUrl, auth: passthrough },
        { name: 'beta', url: beta.url, auth: passthrough },
      ],
    });
    const c = await v2Client(router.mcpUrl, 'auto', devToken('carol'));
    try {
      const there = (await c.call('execute_beta_code', { code: 'pass' })).json;
      const here = (await c.call('execute_alpha_code', { code: "rows = [{'id': i} for i in range(3)]" })).json;
      const sent = (
        await c.call('alpha_send', {
          data_ref: 'rows',
          to: 'beta',
          session_id: there.session_id,
          execution_session_id: here.session_id,
        })
      ).json;
      expect(sent).toMatchObject({ success: true, destination: 'beta', name: 'rows' });
      expect(
        (await c.call('execute_beta_code', { code: 'len(rows)', execution_session_id: there.session_id })).json.stdout,
      ).toBe('3\n');
    } finally {
      await c.close();
      await router.stop();
    }
  });

  it("Python mcp clients send without naming their session; a legacy session's links outlive its connection and die with the session", async () => {
    const calls = [
      { tool: 'execute_alpha_code', args: { code: "open(agora_output('py.txt'), 'w').write('from python')" } },
      { tool: 'alpha_send', args: { data_ref: 'py.txt', to: 'user' } },
    ];
    // Stateless (2026-07-28): the caller's most recently used session.
    const [made, link] = await pyCalls(alpha.mcpUrl, 'auto', calls, { token: devToken('dave') });
    expect(made?.json.success).toBe(true);
    expect(link?.json).toMatchObject({ success: true, destination: 'user' });
    expect(await (await fetch(link?.json.remote_uri as string)).text()).toBe('from python');
    // Legacy: the MCP session's kernel; the client's disconnect ends only the transport, so the link still works…
    const [legacyRun, legacy] = await pyCalls(alpha.mcpUrl, 'legacy', calls, { token: devToken('erin') });
    expect(legacy?.json).toMatchObject({ success: true, destination: 'user' });
    expect(await (await fetch(legacy?.json.remote_uri as string)).text()).toBe('from python');
    // …until the session itself is closed.
    await pyCalls(
      alpha.mcpUrl,
      'auto',
      [{ tool: 'alpha_close_session', args: { session_id: legacyRun?.json.session_id } }],
      { token: devToken('erin') },
    );
    expect(
      await until("the closed session's link to answer 404", async () =>
        (await fetch(legacy?.json.remote_uri as string)).status === 404 ? true : undefined,
      ),
    ).toBe(true);
  });
});
