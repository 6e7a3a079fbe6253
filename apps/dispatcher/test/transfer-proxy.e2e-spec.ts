import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startExecutor, type RunningExecutor } from '../../../test/support/executor-process';
import { freePort } from '../../../test/support/ports';
import { startDispatcher, type RunningRouter } from '../../../test/support/router-process';
import { devToken, v2Client, type TestClient } from '../../../test/support/ts-clients';

const KEY = 'dispatcher-transfer-key-0123456789ab';
const replicaOf = (sid: string) => Buffer.from(sid.split('.')[1] ?? '', 'base64url').toString();
const pickled42 = Buffer.from('80049503000000000000004b2a2e', 'hex').toString('base64'); // pickle of 42
/** pickle (protocol 4, BINBYTES8) of `n` bytes of b'x': a body past the dispatcher's in-memory hold when n > 3 MB. */
const pickledBytes = (n: number) => {
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(n));
  return Buffer.concat([Buffer.from([0x80, 0x04, 0x8e]), len, Buffer.alloc(n, 'x'), Buffer.from('.')]).toString(
    'base64',
  );
};

describe('download links and object transfers through a dispatcher reach the worker that owns the session', () => {
  const workers: RunningExecutor[] = [];
  let dispatcher: RunningRouter;
  const clients: TestClient[] = [];
  const client = async (who: string) => {
    const c = await v2Client(dispatcher.mcpUrl, 'auto', devToken(who));
    clients.push(c);
    return c;
  };
  /** A session of `who` on each worker (new sessions go round robin). */
  const sessionsOnBoth = async (c: TestClient) => {
    const byReplica = new Map<string, string>();
    for (let i = 0; i < 6 && byReplica.size < 2; i++) {
      const sid = String((await c.call('execute_demo_code', { code: 'pass' })).json.session_id);
      byReplica.set(replicaOf(sid), sid);
    }
    expect([...byReplica.keys()].sort()).toEqual(['replica-a', 'replica-b']);
    return [...byReplica.values()];
  };
  const receive = (body: string, who: string) =>
    fetch(`${dispatcher.url}/object-transfer/receive`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${devToken(who)}` },
      body,
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }));

  beforeAll(async () => {
    const port = await freePort();
    // The workers' links name the dispatcher (server.public_url), as a deployment behind one would.
    for (const replica of ['replica-a', 'replica-b'])
      workers.push(
        await startExecutor({
          config: {
            server: { public_url: `http://127.0.0.1:${port}` },
            sessions: { replica, id_signing_key: KEY, warm_pool: 1 },
          },
        }),
      );
    dispatcher = await startDispatcher(
      {
        workers: workers.map((w, i) => ({ name: `w${i + 1}`, url: w.url })),
        worker_auth: { mode: 'passthrough', audience: 'dev' },
        session_key: KEY,
        health_check_interval: 1,
        transfer_max_mb: 10,
      },
      {},
      port,
    );
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await dispatcher?.stop();
    await Promise.all(workers.map((w) => w.stop()));
  });

  it("serves each worker's download link through the dispatcher; tampered and unknown links answer 404 alike", async () => {
    const alice = await client('alice');
    for (const sid of await sessionsOnBoth(alice)) {
      await alice.call('execute_demo_code', {
        code: `open(agora_output('r.txt'), 'w').write(${JSON.stringify(replicaOf(sid))})`,
        execution_session_id: sid,
      });
      const sent = (await alice.call('demo_send', { data_ref: 'r.txt', to: 'user', execution_session_id: sid })).json;
      const link = String(sent.remote_uri);
      expect(link.startsWith(`${dispatcher.url}/artifacts/${sid}/`)).toBe(true);
      const res = await fetch(link);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-disposition')).toContain('r.txt');
      expect(await res.text()).toBe(replicaOf(sid));
      const mac = link.split('/').at(-2)!;
      const tampered = await fetch(link.replace(`/${mac}/`, `/${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}/`));
      const unknown = await fetch(`${dispatcher.url}/artifacts/s-nonexistent/1.x/r.txt`);
      for (const r of [tampered, unknown]) {
        expect(r.status).toBe(404);
        expect(await r.json()).toEqual({ error: 'artifact not found' });
      }
    }
  });

  it("loads a received object into the session's own worker, whether session_id comes before or after the data", async () => {
    const bob = await client('bob');
    const [first, second] = await sessionsOnBoth(bob);
    // Stoa peers send the id first; the reference's peers send it after `data` (then the body is read to its end).
    const before = JSON.stringify({ variable_name: 'v', session_id: first, metadata: {}, data: pickled42 });
    const after = `{"variable_name": "w", "data": "${pickled42}", "metadata": {"k": [1, {"session_id": "decoy"}]}, "session_id": "${second}"}`;
    expect(await receive(before, 'bob')).toMatchObject({ status: 200, body: { success: true, session_id: first } });
    expect(await receive(after, 'bob')).toMatchObject({ status: 200, body: { success: true, session_id: second } });
    expect((await bob.call('execute_demo_code', { code: 'v', execution_session_id: first })).json.stdout).toBe('42\n');
    expect((await bob.call('execute_demo_code', { code: 'w', execution_session_id: second })).json.stdout).toBe('42\n');
    // 8 MB of base64 before the id: held on disk by the dispatcher until the id is read, then relayed whole.
    const big = `{"variable_name": "big", "data": "${pickledBytes(6_000_000)}", "metadata": {"serializer": "pickle"}, "session_id": "${first}"}`;
    expect(await receive(big, 'bob')).toMatchObject({ status: 200, body: { success: true, session_id: first } });
    const size = await bob.call('execute_demo_code', { code: 'len(big), big[:3]', execution_session_id: first });
    expect(size.json.stdout).toBe("(6000000, b'xxx')\n");
  });

  it('relays a binary (application/vnd.stoa.object) body by the session id in its fields header', async () => {
    const dave = await client('dave');
    const [first, second] = await sessionsOnBoth(dave);
    const post = (sid: string, name: string) =>
      fetch(`${dispatcher.url}/object-transfer/receive`, {
        method: 'POST',
        headers: {
          'content-type': 'application/vnd.stoa.object',
          'x-stoa-object': Buffer.from(
            JSON.stringify({ variable_name: name, session_id: sid, metadata: { serializer: 'pickle' } }),
          ).toString('base64url'),
          authorization: `Bearer ${devToken('dave')}`,
        },
        body: Buffer.from(pickled42, 'base64'),
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }));
    expect(await fetch(`${dispatcher.url}/object-transfer/receive`).then((r) => r.json())).toEqual({
      formats: ['application/json', 'application/vnd.stoa.object'],
    });
    expect(await post(first!, 'p')).toMatchObject({ status: 200, body: { success: true, session_id: first } });
    expect(await post(second!, 'q')).toMatchObject({ status: 200, body: { success: true, session_id: second } });
    expect((await dave.call('execute_demo_code', { code: 'p', execution_session_id: first })).json.stdout).toBe('42\n');
    expect((await dave.call('execute_demo_code', { code: 'q', execution_session_id: second })).json.stdout).toBe(
      '42\n',
    );
  });

  it('counts a chunked body (no Content-Length) as it relays it and refuses it past transfer_max_mb', async () => {
    const erin = await client('erin');
    const [sid] = await sessionsOnBoth(erin);
    const mib = Buffer.alloc(1024 * 1024, 1);
    // A pickle of one 12 MiB bytes object (PROTO 5, BINBYTES8 <length>), streamed without a Content-Length.
    const head = Buffer.from([0x80, 5, 0x8e, 0, 0, 0, 0, 0, 0, 0, 0]);
    head.writeBigUInt64LE(BigInt(12 * mib.length), 3);
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(head);
        for (let i = 0; i < 12; i++) c.enqueue(mib);
        c.enqueue(Buffer.from('.'));
        c.close();
      },
    });
    const res = await fetch(`${dispatcher.url}/object-transfer/receive`, {
      method: 'POST',
      headers: {
        'content-type': 'application/vnd.stoa.object',
        'x-stoa-object': Buffer.from(
          JSON.stringify({ variable_name: 'flood', session_id: sid, metadata: {} }),
        ).toString('base64url'),
        authorization: `Bearer ${devToken('erin')}`,
      },
      body,
      duplex: 'half',
    });
    expect({ status: res.status, ...((await res.json()) as object) }).toEqual({
      status: 413,
      success: false,
      error: 'Payload exceeds maximum transfer size (this dispatcher relays up to 10 MB).',
    });
    const bound = await erin.call('execute_demo_code', { code: "'flood' in globals()", execution_session_id: sid });
    expect(bound.json.stdout).toBe('False\n');
  });

  it("answers someone else's session id exactly like an unknown one", async () => {
    const carol = await client('carol');
    const [mine] = await sessionsOnBoth(carol);
    const body = (sid: string) => JSON.stringify({ variable_name: 'x', data: pickled42, session_id: sid });
    const foreign = await receive(body(mine!), 'mallory');
    const unknown = await receive(body(`${mine!.slice(0, -4)}zzzz`), 'mallory');
    expect(foreign.status).toBe(404);
    expect(unknown.status).toBe(404);
    expect(String(foreign.body.error).replace(mine!, 'ID')).toBe(
      String(unknown.body.error).replace(`${mine!.slice(0, -4)}zzzz`, 'ID'),
    );
    expect(
      (await carol.call('execute_demo_code', { code: "'x' in dir()", execution_session_id: mine })).json.stdout,
    ).toBe('False\n');
  });
});
