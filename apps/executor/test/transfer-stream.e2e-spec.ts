import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startExecutor, type RunningExecutor } from '../../../test/support/executor-process';
import { freePort } from '../../../test/support/ports';
import { devToken, v2Client, type TestClient } from '../../../test/support/ts-clients';

const BINARY = 'application/vnd.stoa.object';
const fields = (f: Record<string, unknown>) => Buffer.from(JSON.stringify(f)).toString('base64url');

/**
 * A streamed object that the receiver refuses or cannot load while the sender is still sending: the sender gets
 * the receiver's answer (not a reset), and the receiving session is free again at once.
 */
describe('streamed object transfer: refusals and failed loads mid-stream', () => {
  let alpha: RunningExecutor;
  let beta: RunningExecutor;
  let a: TestClient;
  let b: TestClient;

  beforeAll(async () => {
    beta = await startExecutor({ port: await freePort(), config: { name: 'beta' } });
    alpha = await startExecutor({ config: { name: 'alpha', peers: { beta: beta.url } } });
    a = await v2Client(alpha.mcpUrl, 'auto', devToken('alice'));
    b = await v2Client(beta.mcpUrl, 'auto', devToken('alice'));
  });
  afterAll(async () => {
    await Promise.all([a, b].map((c) => c?.close()));
    await Promise.all([alpha, beta].map((e) => e?.stop()));
  });

  it("a sender refused after its first bytes gets the peer's message, for an unknown and a foreign session alike", async () => {
    const src = String(
      (await a.call('execute_alpha_code', { code: 'import numpy as np\nbig = np.ones(12_000_000, np.uint8)' })).json
        .session_id,
    );
    const bobs = await v2Client(beta.mcpUrl, 'auto', devToken('bob'));
    const foreign = String((await bobs.call('execute_beta_code', { code: 'pass' })).json.session_id);
    await bobs.close();
    const send = async (session_id: string) =>
      (await a.call('alpha_send', { data_ref: 'big', to: 'beta', session_id, execution_session_id: src })).json;
    expect(await send('s-unknown')).toMatchObject({
      success: false,
      error: "Peer 'beta' refused the object (HTTP 404): Session 's-unknown' not found",
    });
    expect(await send(foreign)).toMatchObject({
      success: false,
      error: `Peer 'beta' refused the object (HTTP 404): Session '${foreign}' not found`,
    });
  });

  it('a load that fails while the body is still arriving answers with the kernel error, and frees the session', async () => {
    const sid = String((await b.call('execute_beta_code', { code: 'pass' })).json.session_id);
    // A pickle that needs a module beta lacks, then 24 MiB more, sent at a slow sender's pace: the kernel fails on
    // its first bytes and stops reading; the rest must still be read, and the session not stay locked.
    const head = Buffer.from('\x80\x04cno_such_module\nThing\n', 'latin1');
    const chunk = Buffer.alloc(1024 * 1024, 0x4e);
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(c) {
        if (sent === 0) c.enqueue(head);
        if (sent++ >= 24) return c.close();
        await new Promise((r) => setTimeout(r, 5)); // a sender on a slower link than loopback
        c.enqueue(chunk);
      },
    });
    const res = await fetch(`${beta.url}/object-transfer/receive`, {
      method: 'POST',
      headers: {
        'content-type': BINARY,
        authorization: `Bearer ${devToken('alice')}`,
        'x-stoa-object': fields({ variable_name: 'thing', session_id: sid, metadata: { serializer: 'pickle' } }),
      },
      body,
      duplex: 'half',
    });
    const answer = (await res.json()) as Record<string, unknown>;
    expect(res.status).toBe(500);
    expect(String(answer.error)).toMatch(/^Kernel injection failed: .*ModuleNotFoundError/s);
    expect(String(answer.hint)).toContain('Send a portable representation instead');
    expect(sent).toBe(25); // the whole body was read before the answer
    const after = await b.call('execute_beta_code', { code: "'thing' in globals()", execution_session_id: sid });
    expect(after.json.stdout).toBe('False\n');
  });
});
