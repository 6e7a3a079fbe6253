/**
 * router-throughput: trivial tool calls per second with 32 concurrent callers, through the router and, as the
 * baseline, straight to the executor — router, executor and load generator all on this machine. The load
 * generator sends raw 2026-07-28 `tools/call` requests over 32 keep-alive connections (undici), so its own
 * CPU stays small; CPU seconds of each process are read from /proc to show where the time goes.
 */
import { Pool } from 'undici';
import { emit, note, runBench, SMOKE } from './lib/bench';
import { cpuSeconds, demoBehindRouter } from './lib/network';

const BENCH = 'router-throughput';
const CONCURRENCY = 32;
const SECONDS = Number(process.env.THROUGHPUT_SECONDS ?? (SMOKE ? 1 : 8));

const body = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: {
    name: 'demo_list_sessions',
    arguments: {},
    _meta: {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {},
    },
  },
});
const headers = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': 'tools/call',
  'mcp-name': 'demo_list_sessions',
};

async function load(origin: string, seconds: number): Promise<{ calls: number; errors: number; seconds: number }> {
  const pool = new Pool(origin, { connections: CONCURRENCY, pipelining: 1 });
  let calls = 0;
  let errors = 0;
  const end = performance.now() + seconds * 1000;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < end) {
        const r = await pool.request({ path: '/mcp', method: 'POST', headers, body });
        const text = await r.body.text();
        // The tool's JSON sits escaped inside the JSON-RPC text content.
        if (r.statusCode === 200 && text.includes('\\"success\\": true')) calls++;
        else errors++;
      }
    }),
  );
  const elapsed = (performance.now() - t0) / 1000;
  await pool.close();
  return { calls, errors, seconds: elapsed };
}

async function main(): Promise<void> {
  const net = await demoBehindRouter();
  try {
    const procs = { router: net.router.proc.pid!, executor: net.executor.proc.pid!, loadgen: process.pid };
    await load(net.executor.url, 1); // warm-up both paths
    await load(net.router.url, 1);
    for (const [subject, origin] of [
      ['direct', net.executor.url],
      ['routed', net.router.url],
    ] as const) {
      const before = Object.fromEntries(Object.entries(procs).map(([k, pid]) => [k, cpuSeconds(pid)]));
      note(`${subject}: ${CONCURRENCY} callers for ${SECONDS}s`);
      const r = await load(origin, SECONDS);
      const cpuMsPerCall = Object.fromEntries(
        Object.entries(procs).map(([k, pid]) => [
          k,
          Math.round(((cpuSeconds(pid) - (before[k] ?? 0)) * 1000 * 1000) / Math.max(1, r.calls)) / 1000,
        ]),
      );
      emit({
        bench: BENCH,
        subject,
        metric: 'calls_per_s',
        value: Math.round(r.calls / r.seconds),
        n: r.calls,
        errors: r.errors,
        concurrency: CONCURRENCY,
        ...(subject === 'routed' ? { goal_min: 1200 } : {}), // issue 19: ≥ 1,200 calls/s in each of 3 runs
        cpu_ms_per_call: cpuMsPerCall,
      });
    }
  } finally {
    await net.stop();
  }
}

runBench(BENCH, main);
