import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startExecutor, type RunningExecutor } from '../../../test/support/executor-process';
import { freePort } from '../../../test/support/ports';
import { devToken, v2Client, type TestClient } from '../../../test/support/ts-clients';

const BINARY = 'application/vnd.stoa.object';
const pickled42 = Buffer.from('80049503000000000000004b2a2e', 'hex'); // pickle of 42
const CAP = 30 * 1024 * 1024; // both executors' transfer.max_object_bytes
const fields = (f: Record<string, unknown>) => Buffer.from(JSON.stringify(f)).toString('base64url');

interface Seen {
  method: string;
  contentType: string;
  fieldsHeader?: string;
  /** Sent chunked (no Content-Length): streamed as the kernel serialised it. */
  chunked: boolean;
  bytes: number;
}

/**
 * A plain HTTP server in front of `target` (when given) that records every request to /object-transfer/receive;
 * without a target it plays a reference peer: POST only (no GET listing formats), answering success.
 */
async function recordingPeer(target?: string): Promise<{ url: string; seen: Seen[]; close: () => Promise<void> }> {
  const seen: Seen[] = [];
  const server: Server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const header = req.headers['x-stoa-object'];
      seen.push({
        method: req.method ?? '',
        contentType: String(req.headers['content-type'] ?? ''),
        fieldsHeader: typeof header === 'string' ? header : undefined,
        chunked: req.headers['transfer-encoding'] === 'chunked' && req.headers['content-length'] === undefined,
        bytes: body.length,
      });
      if (!target) {
        if (req.method !== 'POST') return void res.writeHead(405).end('{"detail": "Method Not Allowed"}');
        const parsed = JSON.parse(body.toString()) as { variable_name: string; data: string };
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end(JSON.stringify({ success: true, variable_name: parsed.variable_name }));
      }
      const headers = Object.fromEntries(
        Object.entries(req.headers).filter(
          ([k]) => !['host', 'connection', 'content-length', 'transfer-encoding'].includes(k),
        ),
      ) as Record<string, string>;
      void fetch(`${target}${req.url}`, {
        method: req.method,
        headers,
        body: req.method === 'POST' ? body : undefined,
      }).then(async (r) => {
        res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'application/json' });
        res.end(Buffer.from(await r.arrayBuffer()));
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, seen, close: () => new Promise((r) => server.close(() => r())) };
}

describe('binary object transfer between Stoa executors (negotiated; the reference JSON for other peers)', () => {
  let alpha: RunningExecutor;
  let beta: RunningExecutor;
  let stoaPeer: Awaited<ReturnType<typeof recordingPeer>>;
  let referencePeer: Awaited<ReturnType<typeof recordingPeer>>;
  let a: TestClient;
  let b: TestClient;
  const post = async (headers: Record<string, string>, body: Buffer, who = 'alice') => {
    const res = await fetch(`${beta.url}/object-transfer/receive`, {
      method: 'POST',
      headers: { 'content-type': BINARY, authorization: `Bearer ${devToken(who)}`, ...headers },
      body,
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  beforeAll(async () => {
    beta = await startExecutor({
      port: await freePort(),
      config: { name: 'beta', transfer: { max_object_bytes: CAP } },
    });
    stoaPeer = await recordingPeer(beta.url);
    referencePeer = await recordingPeer();
    alpha = await startExecutor({
      config: {
        name: 'alpha',
        peers: { beta: stoaPeer.url, direct: beta.url, legacy: referencePeer.url },
        transfer: { max_object_bytes: CAP },
      },
    });
    a = await v2Client(alpha.mcpUrl, 'auto', devToken('alice'));
    b = await v2Client(beta.mcpUrl, 'auto', devToken('alice'));
  });
  afterAll(async () => {
    await Promise.all([a, b].map((c) => c?.close()));
    await Promise.all([alpha, beta].map((e) => e?.stop()));
    await Promise.all([stoaPeer, referencePeer].map((p) => p?.close()));
  });

  it('lists its formats on GET and loads a binary body into the named session', async () => {
    expect(await fetch(`${beta.url}/object-transfer/receive`).then((r) => r.json())).toEqual({
      formats: ['application/json', BINARY],
    });
    const sid = String((await b.call('execute_beta_code', { code: 'pass' })).json.session_id);
    const ok = await post(
      { 'x-stoa-object': fields({ variable_name: 'v', session_id: sid, metadata: {} }) },
      pickled42,
    );
    expect(ok).toEqual({
      status: 200,
      body: { success: true, variable_name: 'v', session_id: sid, size_bytes: 14, serializer: expect.any(String) },
    });
    expect((await b.call('execute_beta_code', { code: 'v', execution_session_id: sid })).json.stdout).toBe('42\n');
  });

  it("refuses a missing fields header and bad names with the reference's messages; someone else's session reads as unknown", async () => {
    const missing = await post({}, pickled42);
    expect(missing.status).toBe(400);
    expect(String(missing.body.error)).toMatch(/needs the x-stoa-object header/);
    expect(await post({ 'x-stoa-object': 'not base64 json' }, pickled42)).toMatchObject({ status: 400 });
    expect(await post({ 'x-stoa-object': fields({ variable_name: 'for' }) }, pickled42)).toEqual({
      status: 400,
      body: { success: false, error: "Invalid Python variable name: 'for'" },
    });
    expect(await post({ 'x-stoa-object': fields({ variable_name: 'v' }) }, Buffer.alloc(0))).toEqual({
      status: 400,
      body: { success: false, error: "Missing required fields: 'variable_name' and 'data'" },
    });
    const mine = String((await b.call('execute_beta_code', { code: 'pass' })).json.session_id);
    const foreign = await post(
      { 'x-stoa-object': fields({ variable_name: 'x', session_id: mine }) },
      pickled42,
      'mallory',
    );
    expect(foreign).toEqual({ status: 404, body: { success: false, error: `Session '${mine}' not found` } });
    expect((await b.call('execute_beta_code', { code: "'x' in dir()", execution_session_id: mine })).json.stdout).toBe(
      'False\n',
    );
  });

  it('alpha_send sends raw bytes to a Stoa peer and base64 JSON to a peer that does not list the format', async () => {
    const sid = String((await b.call('execute_beta_code', { code: 'pass' })).json.session_id);
    const src = String(
      (await a.call('execute_alpha_code', { code: 'import numpy as np\narr = np.arange(250_000, dtype=np.uint32)' }))
        .json.session_id,
    );
    const sent = (
      await a.call('alpha_send', { data_ref: 'arr', to: 'beta', session_id: sid, execution_session_id: src })
    ).json;
    expect(sent).toMatchObject({ success: true, destination: 'beta' });
    const posts = stoaPeer.seen.filter((s) => s.method === 'POST');
    expect(posts.at(-1)).toMatchObject({ contentType: BINARY, bytes: sent.size_bytes, chunked: true });
    expect(stoaPeer.seen.some((s) => s.method === 'GET')).toBe(true);
    const check = await b.call('execute_beta_code', {
      code: 'int(arr.sum()), arr.dtype.name',
      execution_session_id: sid,
    });
    expect(check.json.stdout).toBe(`(${(249_999 * 250_000) / 2}, 'uint32')\n`);

    const legacy = (await a.call('alpha_send', { data_ref: 'arr', to: 'legacy', execution_session_id: src })).json;
    expect(legacy).toMatchObject({ success: true, destination: 'legacy' });
    const last = referencePeer.seen.filter((s) => s.method === 'POST').at(-1)!;
    expect(last.contentType).toBe('application/json');
    expect(last.fieldsHeader).toBeUndefined();
    expect(last.bytes).toBeGreaterThan(Number(legacy.size_bytes) * 1.3); // base64: a third larger
  });

  it('streams only what serialises: nothing is posted for an unpicklable object, a half-serialised one and one over the cap are aborted and bind nothing', async () => {
    const src = String(
      (
        await a.call('execute_alpha_code', {
          code: [
            'import numpy as np, threading',
            'class Bad:',
            '    def __reduce__(self):',
            "        raise RuntimeError('cannot reduce Bad')",
            'lock = threading.Lock()',
            'half = [np.zeros(5_000_000, np.uint8), Bad()]',
            'big = np.zeros(CAP + 1_000_000, np.uint8)'.replace('CAP', String(CAP)),
            'ok = np.arange(3_000_000, dtype=np.uint32)',
          ].join('\n'),
        })
      ).json.session_id,
    );
    const sid = String((await b.call('execute_beta_code', { code: 'pass' })).json.session_id);
    const send = async (data_ref: string, to = 'beta') =>
      (await a.call('alpha_send', { data_ref, to, session_id: sid, execution_session_id: src })).json;
    const postsBefore = stoaPeer.seen.filter((s) => s.method === 'POST').length;

    const lock = await send('lock');
    expect(lock).toMatchObject({ success: false });
    expect(String(lock.error)).toMatch(/^Failed to serialize variable 'lock' from kernel: TypeError: cannot pickle/);
    const half = await send('half');
    expect(half).toMatchObject({ success: false });
    expect(String(half.error)).toContain(
      "Failed to serialize variable 'half' from kernel: RuntimeError: cannot reduce Bad",
    );
    const big = await send('big');
    expect(big).toMatchObject({ success: false });
    expect(String(big.error)).toMatch(
      new RegExp(
        `^Serialized object size \\(${(CAP + 1_000_000).toLocaleString('en-US').slice(0, -3)}\\d{3} bytes\\) exceeds limit \\(${CAP.toLocaleString('en-US')} bytes\\)`,
      ),
    );
    // The recording peer forwards a request only once it ended: the aborted ones never reached beta.
    expect(stoaPeer.seen.filter((s) => s.method === 'POST').length).toBe(postsBefore);
    const bound = async () =>
      (
        await b.call('execute_beta_code', {
          code: "[n for n in ('lock', 'half', 'big', 'ok') if n in globals()]",
          execution_session_id: sid,
        })
      ).json.stdout;
    expect(await bound()).toBe('[]\n');
    // Straight to beta (no recording proxy): beta reads the half-serialised stream until the sender aborts it.
    expect(String((await send('half', 'direct')).error)).toContain('RuntimeError: cannot reduce Bad');
    expect(await bound()).toBe('[]\n');
    // The stream arrives as it is produced, and the session still works.
    expect(await send('ok', 'direct')).toMatchObject({ success: true, size_bytes: expect.any(Number) });
    expect(await bound()).toBe("['ok']\n");
    expect(
      (await b.call('execute_beta_code', { code: 'int(ok[-1]), ok.dtype.name', execution_session_id: sid })).json
        .stdout,
    ).toBe("(2999999, 'uint32')\n");
  });

  it('refuses a chunked binary body once it passes max_object_bytes, binding nothing', async () => {
    const sid = String((await b.call('execute_beta_code', { code: 'pass' })).json.session_id);
    const chunk = Buffer.alloc(1024 * 1024, 7);
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        // A pickle of one bytes object larger than the cap (PROTO 5, BINBYTES8 <length>), as the kernel reads it.
        const head = Buffer.from([0x80, 5, 0x8e, 0, 0, 0, 0, 0, 0, 0, 0]);
        head.writeBigUInt64LE(BigInt(CAP + 2 * chunk.length), 3);
        c.enqueue(head);
        for (let i = 0; i <= CAP / chunk.length; i++) c.enqueue(chunk);
        c.close();
      },
    });
    const res = await fetch(`${beta.url}/object-transfer/receive`, {
      method: 'POST',
      headers: {
        'content-type': BINARY,
        authorization: `Bearer ${devToken('alice')}`,
        'x-stoa-object': fields({ variable_name: 'flood', session_id: sid, metadata: {} }),
      },
      body,
      duplex: 'half',
    });
    const answer = (await res.json()) as Record<string, unknown>;
    expect({ status: res.status, ...answer }).toEqual({
      status: 413,
      success: false,
      error: 'Payload exceeds maximum transfer size',
    });
    expect(
      (await b.call('execute_beta_code', { code: "'flood' in dir()", execution_session_id: sid })).json.stdout,
    ).toBe('False\n');
  });
});
