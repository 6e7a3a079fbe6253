/**
 * proxy-overhead: what a traced tool proxy (libs/kernel/python/stoa_tools.py `make_proxy`) costs per
 * call, next to calling the same Python function directly, and what returning the trace costs per
 * execution. Runs a kernel in the bench process (`KernelService` with
 * `bootstrap: k.installTools(kernelToolSpecs(catalog))`, as the executor does) over a temp package:
 *
 *   add(a, b)       -> a + b                          scalar result
 *   make_list(n)    -> list(range(n))                 n = 1000: 4 890 chars of JSON, over the trace's
 *                                                     4 096-char limit, so the trace keeps a <list@N> ref
 *   make_digits(n)  -> [i % 10 for i in range(n)]     n = 1000: 3 000 chars, copied into the trace
 *
 * Part 1 (in-kernel, µs per call): one execution per tool times N calls of the raw function (imported
 * from the package) and then N calls of the proxy, each loop with time.perf_counter() inside the kernel.
 * The direct loop runs first so that the records the proxy loop retains do not slow it (GC). Repeated
 * REPS times (one execution each); the figure is the median over the repetitions.
 *
 * Part 2 (per execution, ms): a cell that makes 100 proxy add() calls vs one making 100 direct calls,
 * interleaved, timed around KernelProcess.execute (the trace travels back in the driver's reply).
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ExecutionOutcome, type KernelExecution, type KernelProcess, KernelService } from '@stoa/kernel';
import { buildCatalog, kernelToolSpecs } from '@stoa/tools';
import { emit, emitFigures, note, quietNestLogger, rounds, summarize, runBench } from './lib/bench';

const BENCH = 'proxy-overhead';
const N = rounds(20_000, 200);
const REPS = rounds(3, 1);
const LIST_LEN = 1000;
const TRACE_CALLS = 100;
const TRACE_WARMUP = rounds(10, 1);
const TRACE_SAMPLES = rounds(50, 2);
const OPTS = { timeoutMs: 600_000, graceMs: 3_000, captureChars: 100_000 };

const PACKAGE = [
  'def add(a, b):',
  '    return a + b',
  'def make_list(n):',
  '    return list(range(n))',
  'def make_digits(n):',
  '    return [i % 10 for i in range(n)]',
].join('\n');

const MANIFEST = {
  tools: [
    {
      name: 'add',
      description: 'Add two numbers.',
      module: 'benchpkg.ops',
      parameters: [
        { name: 'a', type: 'int', description: 'first' },
        { name: 'b', type: 'int', description: 'second' },
      ],
      returns: { name: 'sum', type: 'int', description: 'the sum' },
    },
    {
      name: 'make_list',
      description: 'A list 0..n-1.',
      module: 'benchpkg.ops',
      parameters: [{ name: 'n', type: 'int', description: 'length' }],
      returns: { name: 'values', type: 'list', description: 'the list' },
    },
    {
      name: 'make_digits',
      description: 'n digits.',
      module: 'benchpkg.ops',
      parameters: [{ name: 'n', type: 'int', description: 'length' }],
      returns: { name: 'values', type: 'list', description: 'the list' },
    },
  ],
};

interface Case {
  subject: string;
  tool: string;
  args: string;
}
const CASES: Case[] = [
  { subject: 'scalar', tool: 'add', args: '1, 2' },
  { subject: 'list-1000-ref', tool: 'make_list', args: String(LIST_LEN) },
  { subject: 'list-1000-inline', tool: 'make_digits', args: String(LIST_LEN) },
];

const PRELUDE = [
  'import json as _json, os as _os, time as _time',
  'from benchpkg import ops as _ops',
  'def _rss_mb():',
  '    with open("/proc/self/statm") as f:',
  '        return int(f.read().split()[1]) * _os.sysconf("SC_PAGE_SIZE") / 2**20',
  'def _loop(_f, _n, *_a):',
  '    _t0 = _time.perf_counter()',
  '    for _ in range(_n):',
  '        _f(*_a)',
  '    return (_time.perf_counter() - _t0) / _n * 1e6',
].join('\n');

/** One execution: direct loop, then proxy loop; per-call µs measured in the kernel, plus RSS. */
function timingCell(c: Case): string {
  return [
    `_raw = _ops.${c.tool}`,
    `_r0 = _rss_mb()`,
    `_direct = _loop(_raw, ${N}, ${c.args})`,
    `_r1 = _rss_mb()`,
    `_proxy = _loop(${c.tool}, ${N}, ${c.args})`,
    `_r2 = _rss_mb()`,
    `print(_json.dumps({"direct_us": _direct, "proxy_us": _proxy, "rss_direct_mb": _r1 - _r0, "rss_proxy_mb": _r2 - _r1}))`,
  ].join('\n');
}

function check(r: KernelExecution, what: string): void {
  if (r.outcome !== ExecutionOutcome.completed || r.raised) throw new Error(`${what}: ${r.outcome} ${r.stderr.text()}`);
}

const r3 = (n: number): number => Number(n.toFixed(3));
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

async function perCall(k: KernelProcess): Promise<void> {
  for (const c of CASES) {
    const direct: number[] = [];
    const proxy: number[] = [];
    for (let rep = 0; rep < REPS; rep++) {
      const t0 = performance.now();
      const r = await k.execute(timingCell(c), OPTS);
      const wall = performance.now() - t0;
      check(r, c.subject);
      const m = JSON.parse(r.stdout.text()) as {
        direct_us: number;
        proxy_us: number;
        rss_direct_mb: number;
        rss_proxy_mb: number;
      };
      direct.push(m.direct_us);
      proxy.push(m.proxy_us);
      const traceChars = JSON.stringify(r.toolCalls).length;
      const inKernelMs = ((m.direct_us + m.proxy_us) * N) / 1000;
      note(
        `${c.subject} rep ${rep + 1}: direct ${m.direct_us.toFixed(2)} µs, proxy ${m.proxy_us.toFixed(2)} µs per call; ` +
          `RSS +${m.rss_direct_mb.toFixed(1)} MB (direct loop) / +${m.rss_proxy_mb.toFixed(1)} MB (proxy loop); ` +
          `trace ${r.toolCalls.length} records, ${(traceChars / 1e6).toFixed(1)} MB JSON; execution ${wall.toFixed(0)} ms wall vs ${inKernelMs.toFixed(0)} ms in the loops`,
      );
    }
    const d = median(direct);
    const p = median(proxy);
    emit({ bench: BENCH, subject: `direct-${c.subject}`, metric: 'us_per_call', value: r3(d), n: N, reps: REPS });
    emit({
      bench: BENCH,
      subject: `proxy-${c.subject}`,
      metric: 'us_per_call',
      value: r3(p),
      n: N,
      reps: REPS,
      baseline: `direct-${c.subject}`,
      ratio: r3(p / d),
      added_us: r3(p - d),
    });
  }
}

async function traceReturn(k: KernelProcess): Promise<void> {
  const cells = {
    proxy: `for _i in range(${TRACE_CALLS}):\n    add(_i, 1)`,
    direct: `for _i in range(${TRACE_CALLS}):\n    _ops.add(_i, 1)`,
  };
  const names = Object.keys(cells) as (keyof typeof cells)[];
  const samples: Record<keyof typeof cells, number[]> = { proxy: [], direct: [] };
  note(
    `trace return: ${TRACE_WARMUP} warm-up + ${TRACE_SAMPLES} measured rounds of ${TRACE_CALLS} proxy calls / ${TRACE_CALLS} direct calls per execution, interleaved`,
  );
  for (let i = 0; i < TRACE_WARMUP + TRACE_SAMPLES; i++) {
    for (let j = 0; j < names.length; j++) {
      const name = names[(i + j) % names.length] as keyof typeof cells;
      const t0 = performance.now();
      const r = await k.execute(cells[name], OPTS);
      const ms = performance.now() - t0;
      check(r, name);
      if (r.toolCalls.length !== (name === 'proxy' ? TRACE_CALLS : 0))
        throw new Error(`${name}: ${r.toolCalls.length} trace records`);
      if (i >= TRACE_WARMUP) samples[name].push(ms);
    }
  }
  const proxy = summarize(samples.proxy);
  const direct = summarize(samples.direct);
  emitFigures(BENCH, `exec-${TRACE_CALLS}-direct`, direct);
  emitFigures(BENCH, `exec-${TRACE_CALLS}-proxy`, proxy, { name: `exec-${TRACE_CALLS}-direct`, summary: direct });
  for (const metric of ['p50', 'p99'] as const) {
    const added = proxy[`${metric}_ms`] - direct[`${metric}_ms`];
    emit({
      bench: BENCH,
      subject: `exec-${TRACE_CALLS}-proxy`,
      metric: `${metric}_added_ms`,
      value: r3(added),
      n: proxy.n,
      per_call_us: r3((added * 1000) / TRACE_CALLS),
    });
  }
}

async function main(): Promise<void> {
  quietNestLogger();
  const root = mkdtempSync(join(tmpdir(), 'stoa-bench-proxy-'));
  chmodSync(root, 0o755); // as root, kernels run under their own uid and must be able to import benchpkg
  mkdirSync(join(root, 'benchpkg'));
  writeFileSync(join(root, 'benchpkg', '__init__.py'), '');
  writeFileSync(join(root, 'benchpkg', 'ops.py'), `${PACKAGE}\n`);
  const { tools } = buildCatalog(MANIFEST, 'proxy-overhead bench');
  const specs = kernelToolSpecs({ serverName: 'bench', tools, states: [], skills: [] });
  const kernels = new KernelService({
    python: 'python3',
    env: { PYTHONPATH: root },
    passthroughEnv: [],
    startTimeoutMs: 20_000,
    dataDir: mkdtempSync(join(tmpdir(), 'stoa-kernels-')),
    bootstrap: (k) => k.installTools(specs, 20_000),
  });
  try {
    const k = await kernels.start(kernels.allocateDirs());
    // Warm-up: imports, the proxies' lazy import of their implementation, one call of each.
    const warm = await k.execute(
      `${PRELUDE}\nadd(1, 2); make_list(3); make_digits(3)\n_ops.add(1, 2)\nprint(_ops.add is not add)`,
      OPTS,
    );
    check(warm, 'warm-up');
    if (warm.stdout.text() !== 'True\n' || warm.toolCalls.length !== 3)
      throw new Error(`warm-up: proxies not installed? ${warm.stdout.text()} ${JSON.stringify(warm.toolCalls)}`);
    note(`part 1: ${N} calls per loop, ${REPS} executions per case (${CASES.map((c) => c.subject).join(', ')})`);
    await perCall(k);
    await traceReturn(k);
  } finally {
    await kernels.onApplicationShutdown();
    rmSync(root, { recursive: true, force: true });
  }
}

runBench(BENCH, main);
