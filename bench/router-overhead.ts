/**
 * router-overhead: the same MCP calls straight to the demo executor and through a router in front of it,
 * interleaved in one run (TS SDK v2 clients, 2026-07-28 era): a trivial tool (`demo_list_sessions`) and
 * `1+1` in an existing session. The router forwards 2026-07-28 tools/call requests without re-parsing them.
 */
import { emitFigures, note, runBench, summarize } from './lib/bench';
import { connect } from './lib/mcp';
import { demoBehindRouter } from './lib/network';

const BENCH = 'router-overhead';
const WARMUP = 50;
const SAMPLES = 500;

async function main(): Promise<void> {
  const net = await demoBehindRouter();
  try {
    const direct = await connect(net.executor.mcpUrl);
    const routed = await connect(net.router.mcpUrl);
    const sd = (JSON.parse(await direct.call('execute_demo_code', { code: 'x = 1' })) as { session_id: string }).session_id;
    const sr = (JSON.parse(await routed.call('execute_demo_code', { code: 'x = 1' })) as { session_id: string }).session_id;
    const cases = {
      'list-sessions': (c: typeof direct) => c.call('demo_list_sessions', {}),
      'execute-1+1': (c: typeof direct, sid: string) => c.call('execute_demo_code', { code: '1+1', execution_session_id: sid }),
    };
    const samples: Record<string, number[]> = {};
    note(`warm-up ${WARMUP}, then ${SAMPLES} rounds; each round times every case direct and routed, alternating order`);
    for (let i = 0; i < WARMUP + SAMPLES; i++) {
      for (const [name, run] of Object.entries(cases)) {
        const order: ['direct' | 'routed', typeof direct, string][] = [['direct', direct, sd], ['routed', routed, sr]];
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
      emitFigures(BENCH, `${name}-routed`, summarize(samples[`${name}:routed`]!), { name: `${name}-direct`, summary: d, goalMax: 1.35 });
    }
    await direct.close();
    await routed.close();
  } finally {
    await net.stop();
  }
}

runBench(BENCH, main);
