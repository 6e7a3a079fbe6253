/**
 * Connector overhead (router-overhead, gateway-overhead, dispatcher-overhead): the same MCP calls straight to the
 * demo executor and through a connector in front of it, interleaved in one run (TS SDK v2 clients, 2026-07-28
 * era): a trivial tool (`demo_list_sessions`) and `1+1` in an existing session. Connectors forward 2026-07-28
 * tools/call requests without re-parsing them.
 */
import { emitFigures, note, rounds, summarize } from './bench';
import { connect } from './mcp';
import { type Connector, demoBehindRouter } from './network';

const WARMUP = rounds(50, 1);
const SAMPLES = rounds(500, 3);

/** Runs the overhead cases against `kind`; bench name `{kind}-overhead`. */
export async function overhead(kind: Connector): Promise<void> {
  const BENCH = `${kind}-overhead`;
  const net = await demoBehindRouter(kind);
  try {
    const direct = await connect(net.executor.mcpUrl);
    const routed = await connect(net.router.mcpUrl);
    const sd = (JSON.parse(await direct.call('execute_demo_code', { code: 'x = 1' })) as { session_id: string })
      .session_id;
    const sr = (JSON.parse(await routed.call('execute_demo_code', { code: 'x = 1' })) as { session_id: string })
      .session_id;
    const cases = {
      'list-sessions': (c: typeof direct) => c.call('demo_list_sessions', {}),
      'execute-1+1': (c: typeof direct, sid: string) =>
        c.call('execute_demo_code', { code: '1+1', execution_session_id: sid }),
    };
    const samples: Record<string, number[]> = {};
    note(`warm-up ${WARMUP}, then ${SAMPLES} rounds; each round times every case direct and routed, alternating order`);
    for (let i = 0; i < WARMUP + SAMPLES; i++) {
      for (const [name, run] of Object.entries(cases)) {
        const order: ['direct' | 'routed', typeof direct, string][] = [
          ['direct', direct, sd],
          ['routed', routed, sr],
        ];
        if (i % 2) order.reverse();
        for (const [via, client, sid] of order) {
          const t0 = performance.now();
          await run(client, sid);
          if (i >= WARMUP) (samples[`${name}:${via}`] ??= []).push(performance.now() - t0);
        }
      }
    }
    for (const name of Object.keys(cases)) {
      const d = summarize(samples[`${name}:direct`]!);
      emitFigures(BENCH, `${name}-direct`, d);
      emitFigures(BENCH, `${name}-routed`, summarize(samples[`${name}:routed`]!), {
        name: `${name}-direct`,
        summary: d,
        goalMax: 1.35,
      });
    }
    await direct.close();
    await routed.close();
  } finally {
    await net.stop();
  }
}
