import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  openStream,
  PNG_DISPLAY_CODE,
  startActivity,
  TEST_WRITER_SECRET,
  type RunningActivity,
} from '../../../test/support/activity';
import { ADMIN } from '../../../test/support/admin';
import { startExecutor, type RunningExecutor } from '../../../test/support/executor-process';
import { freePort } from '../../../test/support/ports';
import { v2Client, type TestClient } from '../../../test/support/ts-clients';

const publishTo = (url: string) => ({ ACTIVITY_UI_URL: url, ACTIVITY_UI_SECRET: TEST_WRITER_SECRET });

describe('executor activity events', () => {
  let activity: RunningActivity;
  let executor: RunningExecutor;
  let client: TestClient;
  beforeAll(async () => {
    activity = await startActivity();
    executor = await startExecutor({ env: publishTo(activity.url) });
    client = await v2Client(executor.mcpUrl, 'auto');
  });
  afterAll(async () => {
    await client?.close();
    await executor?.stop();
    await activity?.stop();
  });

  it("sends a run's PNG display to the dashboard and keeps it out of the agent's result", async () => {
    const cookie = await activity.cookie();
    const stream = await openStream(`${activity.url}/stream`, { cookie });
    const r = await client.call('execute_demo_code', {
      code: `${PNG_DISPLAY_CODE}\nprint('plotted')`,
      description: 'plot',
    });
    expect(r.json.success).toBe(true);
    expect(r.json).not.toHaveProperty('displays');
    expect(r.text).not.toContain('iVBOR'); // no base64 PNG anywhere in the tool result
    await stream.waitFor(() => stream.activity().some((e) => e.description === 'plot'));
    const e = stream.activity().find((x) => x.description === 'plot') as unknown as Record<string, unknown> & {
      displays: { mime_type: string; figure: string }[];
    };
    expect(e).toMatchObject({
      type: 'code_executed',
      server: 'demo',
      success: true,
      stdout: 'plotted\n',
      session_id: r.json.session_id,
      user: 'dev-user@dev-tenant',
    });
    expect(e.code).toContain('display(Figure())');
    expect(e.displays).toHaveLength(1);
    const png = await fetch(`${activity.url}/figures/${e.displays[0]!.figure}`, { headers: { cookie } });
    expect(
      Buffer.from(await png.arrayBuffer())
        .subarray(1, 4)
        .toString(),
    ).toBe('PNG');
    stream.close();
  });

  it('publishes code_failed with the traceback for code that raises', async () => {
    const cookie = await activity.cookie();
    const stream = await openStream(`${activity.url}/stream`, { cookie });
    await client.call('execute_demo_code', { code: 'raise ValueError("boom")', description: 'fails' });
    await stream.waitFor(() => stream.activity().some((e) => e.description === 'fails'));
    const failed = stream.activity().find((e) => e.description === 'fails')!;
    expect(failed).toMatchObject({ type: 'code_failed', success: false });
    expect(String(failed.stderr)).toContain('ValueError: boom');
    stream.close();
  });

  it('publishes object_received when a peer sends a variable to the receive endpoint', async () => {
    const cookie = await activity.cookie();
    const stream = await openStream(`${activity.url}/stream`, { cookie });
    const session = (await client.call('execute_demo_code', { code: '0' })).json.session_id as string;
    const res = await fetch(`${executor.url}/object-transfer/receive`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        variable_name: 'answer',
        data: Buffer.from('80049503000000000000004b2a2e', 'hex').toString('base64'), // pickle of 42
        session_id: session,
        metadata: { source_server: 'alpha' },
      }),
    });
    expect(res.status).toBe(200);
    await stream.waitFor(() => stream.activity().some((e) => e.type === 'object_received'));
    expect(stream.activity().find((e) => e.type === 'object_received')).toMatchObject({
      server: 'demo',
      success: true,
      session_id: session,
      variable_name: 'answer',
      source_server: 'alpha',
      user: 'dev-user@dev-tenant',
      description: "received 'answer' from alpha",
    });
    expect(
      (await client.call('execute_demo_code', { code: 'answer', execution_session_id: session })).json.stdout,
    ).toBe('42\n');
    stream.close();
  });
});

/** A TCP server that accepts connections and never answers (a hung activity app). */
async function hangingServer(): Promise<{ url: string; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((s) => sockets.add(s));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    close: () =>
      new Promise<void>((r) => {
        sockets.forEach((s) => s.destroy());
        server.close(() => r());
      }),
  };
}

/**
 * Two executors with publishing off are the baseline: on a shared 2-core machine two identical executor processes
 * differ by up to ~12 % at p50 in one run (measured while writing this test), far more than the 5 % at stake, so a
 * single "none" process cannot tell a publisher's cost from process noise. "Within 5 % of none" is therefore
 * within 5 % of the slower of the two, widened by the spread between them; all four carry the same calls, interleaved,
 * so load hits them alike.
 */
describe('activity down or hanging', () => {
  const ROUNDS = 200;
  const names = ['none', 'none_b', 'dead', 'hanging'];
  const executors: Record<string, RunningExecutor> = {};
  const clients: Record<string, TestClient> = {};
  let hang: Awaited<ReturnType<typeof hangingServer>>;
  beforeAll(async () => {
    hang = await hangingServer();
    const dead = `http://127.0.0.1:${await freePort()}`; // nothing listens there
    const envs: Record<string, Record<string, string>> = {
      none: {},
      none_b: {},
      dead: publishTo(dead),
      hanging: publishTo(hang.url),
    };
    for (const k of names) {
      executors[k] = await startExecutor({ env: envs[k] });
      clients[k] = await v2Client(executors[k].mcpUrl, 'auto');
    }
  });
  afterAll(async () => {
    for (const c of Object.values(clients)) await c.close();
    for (const e of Object.values(executors)) await e.stop();
    await hang?.close();
  });

  it('executions unaffected within 5 % of none', async () => {
    const times: Record<string, number[]> = Object.fromEntries(names.map((k) => [k, []]));
    const sessions: Record<string, string> = {};
    for (const k of names) {
      const first = await clients[k]!.call('execute_demo_code', { code: 'n = 0' });
      sessions[k] = first.json.session_id as string;
    }
    // Interleaved rounds with the order rotated, so machine noise hits the four alike.
    for (let i = 0; i < ROUNDS; i++) {
      for (let j = 0; j < names.length; j++) {
        const k = names[(i + j) % names.length]!;
        const t0 = performance.now();
        const r = await clients[k]!.call('execute_demo_code', {
          code: `n += 1\nprint(n)`,
          execution_session_id: sessions[k],
        });
        times[k]!.push(performance.now() - t0);
        expect(r.json).toMatchObject({ success: true, stdout: `${i + 1}\n` });
      }
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const p50 = Object.fromEntries(names.map((k) => [k, median(times[k]!)]));
    // The bound is 5 % over the slower baseline plus the spread the two identical baselines showed in this run:
    // a third process differs from them by process noise alone about as much as they differ from each other (a
    // CI run had none 8.18, none_b 7.96, hanging 7.62 and dead 8.67 ms, 1.06x, with no publisher on the path).
    const none = Math.max(p50.none!, p50.none_b!);
    const spread = Math.abs(p50.none! - p50.none_b!);
    for (const k of ['dead', 'hanging'])
      expect(p50[k], `${k} p50 vs none (ms): ${JSON.stringify(p50)}`).toBeLessThanOrEqual(none * 1.05 + spread);
    // The publishers did try (and drop), so the comparison measured a dead and a hanging UI. A hanging UI's batch
    // is dropped when its POST times out (timeout_ms, 2 s), which may come after the last call: poll for it.
    for (const k of ['dead', 'hanging'])
      await expect
        .poll(async () => (await fetch(`${executors[k]!.url}/metrics`, { headers: ADMIN })).text(), {
          timeout: 10_000,
          interval: 200,
        })
        .toMatch(/^stoa_activity_events_dropped_total\{[^}]*\} [1-9]/m);
  });
});
