/**
 * square-throughput: chat_post_message calls per second with 20 agents posting at once into one channel of a
 * square on SQLite (the embedded default), and the p99 latency of a post. Baseline, same run and load: the
 * same 20 agents calling get_agent_by_name (a read through the same MCP, identity and audit path, no write).
 * Goal: ≥ 1,000 messages/s.
 *
 * The agents send raw 2026-07-28 `tools/call` requests over keep-alive connections (undici), so the load
 * generator's own CPU stays small on the shared cores; CPU ms per call of the square and of the load generator
 * are read from /proc (they carry across machines and loads better than calls/s).
 */
import { emit, note, noteLoadAverage, percentile, runBench, SMOKE } from './lib/bench';
import { cpuSeconds } from './lib/network';
import { squareCall, squarePool } from './lib/square';
import { startSquare } from '../test/support/square-process';

const BENCH = 'square-throughput';
const AGENTS = 20;
const SECONDS = Number(process.env.THROUGHPUT_SECONDS ?? (SMOKE ? 1 : 8));

async function drive(
  seconds: number,
  call: (agent: number, i: number) => Promise<unknown>,
  pids: Record<string, number> = {},
): Promise<{ perSecond: number; p50: number; p99: number; n: number; cpuMsPerCall: Record<string, number> }> {
  const cpu0 = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuSeconds(pid)]));
  const latencies: number[] = [];
  const end = performance.now() + seconds * 1000;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: AGENTS }, async (_, agent) => {
      for (let i = 0; performance.now() < end; i++) {
        const s = performance.now();
        await call(agent, i);
        latencies.push(performance.now() - s);
      }
    }),
  );
  const elapsed = (performance.now() - t0) / 1000;
  const perCall = (k: string, pid: number) =>
    Math.round(((cpuSeconds(pid) - (cpu0[k] ?? 0)) * 1e6) / Math.max(1, latencies.length)) / 1000;
  return {
    perSecond: latencies.length / elapsed,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    n: latencies.length,
    cpuMsPerCall: Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, perCall(k, pid)])),
  };
}

async function main(): Promise<void> {
  noteLoadAverage();
  // Rate limits off for the bench: it measures the square, not its per-agent budget.
  const square = await startSquare({ chat: { max_messages_per_minute: 1_000_000 } });
  const call = (who: string, tool: string, args: Record<string, unknown>) => squareCall(square.url, who, tool, args);
  const pool = squarePool(square.url, AGENTS);
  const fast = (agent: number, tool: string, args: Record<string, unknown>) => pool.call(`agent${agent}`, tool, args);
  const pids = { square: square.proc.pid!, loadgen: process.pid };
  try {
    await Promise.all(Array.from({ length: AGENTS }, (_, a) => call(`agent${a}`, 'register', { name: `agent-${a}` })));
    await drive(1, (a, i) => fast(a, 'chat_post_message', { channel: '#warm', content: `w${i}` }));
    note(`baseline: ${AGENTS} agents calling get_agent_by_name for ${SECONDS}s`);
    const base = await drive(SECONDS, (a) => fast(a, 'get_agent_by_name', { name: `agent-${a}` }), pids);
    note(`subject: ${AGENTS} agents posting for ${SECONDS}s`);
    const posts = await drive(
      SECONDS,
      (a, i) => fast(a, 'chat_post_message', { channel: '#load', content: `agent-${a} message ${i}` }),
      pids,
    );
    const stored = (await call('agent0', 'chat_list_channels', { prefix: '#load' })).channels as {
      message_count: number;
    }[];
    if (stored[0]?.message_count !== posts.n)
      throw new Error(`posted ${posts.n} messages but the channel holds ${stored[0]?.message_count}`);
    const round = (n: number) => Math.round(n * 100) / 100;
    emit({
      bench: BENCH,
      subject: 'post',
      metric: 'msgs_per_s',
      value: round(posts.perSecond),
      n: posts.n,
      baseline: 'get_agent_by_name',
      ratio: round(posts.perSecond / base.perSecond),
      goal_min: 1000,
      cpu_ms_per_call: posts.cpuMsPerCall,
    });
    emit({
      bench: BENCH,
      subject: 'get_agent_by_name',
      metric: 'calls_per_s',
      value: round(base.perSecond),
      n: base.n,
      cpu_ms_per_call: base.cpuMsPerCall,
    });
    for (const [metric, value, baseValue] of [
      ['p50_ms', posts.p50, base.p50],
      ['p99_ms', posts.p99, base.p99],
    ] as const)
      emit({
        bench: BENCH,
        subject: 'post',
        metric,
        value: round(value),
        n: posts.n,
        baseline: 'get_agent_by_name',
        ratio: round(value / baseValue),
      });
  } finally {
    await pool.close();
    await square.stop();
  }
}

runBench(BENCH, main);
