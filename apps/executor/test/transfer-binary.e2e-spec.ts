import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startExecutor, type RunningExecutor } from '../../../test/support/executor-process';
import { freePort } from '../../../test/support/ports';
import { devToken, v2Client, type TestClient } from '../../../test/support/ts-clients';

const BINARY = 'application/vnd.stoa.object';
const pickled42 = Buffer.from('80049503000000000000004b2a2e', 'hex'); // pickle of 42
const fields = (f: Record<string, unknown>) => Buffer.from(JSON.stringify(f)).toString('base64url');

interface Seen {
  method: string;
  contentType: string;
  fieldsHeader?: string;
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
        bytes: body.length,
      });
      if (!target) {
        if (req.method !== 'POST') return void res.writeHead(405).end('{"detail": "Method Not Allowed"}');
        const parsed = JSON.parse(body.toString()) as { variable_name: string; data: string };
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end(JSON.stringify({ success: true, variable_name: parsed.variable_name }));
      }
      const headers = Object.fromEntries(
        Object.entries(req.headers).filter(([k]) => !['host', 'connection', 'content-length'].includes(k)),
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
    beta = await startExecutor({ port: await freePort(), config: { name: 'beta' } });
    stoaPeer = await recordingPeer(beta.url);
    referencePeer = await recordingPeer();
    alpha = await startExecutor({
      config: { name: 'alpha', peers: { beta: stoaPeer.url, legacy: referencePeer.url } },
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
    expect(posts.at(-1)).toMatchObject({ contentType: BINARY, bytes: sent.size_bytes });
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
});
