import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startExecutor, type RunningExecutor } from '../../../test/support/executor-process';
import { freePort } from '../../../test/support/ports';
import { HAS_BWRAP } from '../../../test/support/sandbox';
import { devToken, v2Client, type TestClient } from '../../../test/support/ts-clients';

/** Every sandbox mode a config may ask for; the namespaced ones only where bubblewrap runs (they refuse to start without). */
const MODES = [
  { network: 'inherit', filesystem: 'host' }, // the demo's
  { network: 'inherit', filesystem: 'host', user: 'server' },
  ...(HAS_BWRAP
    ? [
        { network: 'none', filesystem: 'confined' },
        { network: 'inherit', filesystem: 'confined' },
        { network: 'none', filesystem: 'host' },
      ]
    : []),
];

describe.each(MODES)('peer object transfer into a kernel with sandbox %o', (sandbox) => {
  let alpha: RunningExecutor;
  let beta: RunningExecutor;
  let a: TestClient;
  let b: TestClient;

  beforeAll(async () => {
    const betaPort = await freePort();
    beta = await startExecutor({ port: betaPort, config: { name: 'beta', sandbox } });
    alpha = await startExecutor({
      config: { name: 'alpha', sandbox, peers: { beta: `http://127.0.0.1:${betaPort}/mcp` } },
    });
    a = await v2Client(alpha.mcpUrl, 'auto', devToken('alice'));
    b = await v2Client(beta.mcpUrl, 'auto', devToken('alice'));
  });
  afterAll(async () => {
    await Promise.all([a, b].map((c) => c?.close()));
    await Promise.all([alpha, beta].map((e) => e?.stop()));
  });

  it('lands the object in the named peer session, readable by that kernel', async () => {
    const target = (await b.call('execute_beta_code', { code: 'ready = True' })).json;
    const src = (await a.call('execute_alpha_code', { code: "arr = list(range(12))\ncfg = {'k': 'v'}" })).json;
    for (const ref of ['arr', 'cfg']) {
      const r = (
        await a.call('alpha_send', {
          data_ref: ref,
          to: 'beta',
          session_id: target.session_id,
          execution_session_id: src.session_id,
        })
      ).json;
      expect({ ref, success: r.success, error: r.error }).toEqual({ ref, success: true, error: undefined });
    }
    const check = (
      await b.call('execute_beta_code', { code: "print(sum(arr), cfg['k'])", execution_session_id: target.session_id })
    ).json;
    expect(check.stdout).toBe('66 v\n');
  });
});
