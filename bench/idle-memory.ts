/**
 * idle-memory: the memory an idle session holds. Two executors, run one after the other (never at the
 * same time, so their figures do not mix): one with the default sandbox (network none, filesystem
 * confined; as root each kernel gets its own uid and runs under bubblewrap) and one without an OS sandbox
 * (network inherit, filesystem host, user server: plain python kernels). Each opens IDLE_SESSIONS
 * (default 200) sessions over MCP (`execute_demo_code({code: 'x = 1'})`, no session id → a new session
 * with a live kernel), waits 2 s, then reads every descendant process of the executor from /proc: RSS
 * (status VmRSS), USS (Private_Clean + Private_Dirty) and PSS (Pss) from smaps_rollup. The baseline, in
 * the same run: 20 bare `python -c "…time.sleep(600)"` processes of the same interpreter.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { startExecutor, type RunningExecutor } from '../test/support/executor-process';
import { alive, descendants, rssMb } from '../test/support/processes';
import { emit, note, quietNestLogger, rounds, runBench, SMOKE } from './lib/bench';
import { realPython } from './lib/kernels';
import { connect } from './lib/mcp';

const BENCH = 'idle-memory';
const SESSIONS = Number(process.env.IDLE_SESSIONS ?? (SMOKE ? 4 : 200));
const CONCURRENCY = 4;
const SETTLE_MS = 2000;
const BARE_PROCS = rounds(20, 2);
const GOAL_RSS_MB = 12;

const round2 = (n: number): number => Number(n.toFixed(2));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Kind = 'bwrap' | 'python' | 'other';

/** Memory of a group of processes, in MiB. */
interface Mem {
  procs: number;
  rss: number;
  uss: number;
  pss: number;
}

const emptyMem = (): Mem => ({ procs: 0, rss: 0, uss: 0, pss: 0 });

/** RSS / USS / PSS of one process in MiB, or undefined when it has exited meanwhile. */
function procMem(pid: number): Mem | undefined {
  try {
    const rss = rssMb(pid);
    const kb: Record<string, number> = {};
    for (const m of readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8').matchAll(/^(\w+):\s+(\d+) kB/gm))
      kb[m[1] as string] = Number(m[2]);
    return {
      procs: 1,
      rss,
      uss: ((kb.Private_Clean ?? 0) + (kb.Private_Dirty ?? 0)) / 1024,
      pss: (kb.Pss ?? 0) / 1024,
    };
  } catch {
    return undefined;
  }
}

function kindOf(pid: number): Kind {
  try {
    const comm = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
    if (comm === 'bwrap') return 'bwrap';
    if (comm.startsWith('python')) return 'python';
    return 'other';
  } catch {
    return 'other';
  }
}

/** Sums the memory of `pids`, per process kind and in total. */
function measure(pids: readonly number[]): Record<Kind | 'all', Mem> {
  const out: Record<Kind | 'all', Mem> = { bwrap: emptyMem(), python: emptyMem(), other: emptyMem(), all: emptyMem() };
  for (const pid of pids) {
    const kind = kindOf(pid);
    const m = procMem(pid);
    if (!m) continue;
    for (const group of [out[kind], out.all]) {
      group.procs += m.procs;
      group.rss += m.rss;
      group.uss += m.uss;
      group.pss += m.pss;
    }
  }
  return out;
}

/** "RSS a / USS b / PSS c MiB" of `m` divided by `per`. */
const fmt = (m: Mem, per: number) =>
  `RSS ${(m.rss / per).toFixed(2)} / USS ${(m.uss / per).toFixed(2)} / PSS ${(m.pss / per).toFixed(2)} MiB`;

/** The baseline: BARE_PROCS idle interpreters, measured once each has started sleeping. */
async function measureBare(python: string, procs: ChildProcess[]): Promise<Mem> {
  const code = "import sys, time; print('ready', flush=True); time.sleep(600)";
  const ready: Promise<void>[] = [];
  for (let i = 0; i < BARE_PROCS; i++) {
    const child = spawn(python, ['-c', code], { stdio: ['ignore', 'pipe', 'inherit'] });
    procs.push(child);
    ready.push(
      new Promise((resolve, reject) => {
        child.once('error', reject);
        child.once('exit', (c, s) => reject(new Error(`bare python exited with ${s ?? c}`)));
        child.stdout?.once('data', () => resolve());
      }),
    );
  }
  await Promise.all(ready);
  await sleep(SETTLE_MS);
  const m = measure(procs.map((p) => p.pid as number)).all;
  if (m.procs !== BARE_PROCS) throw new Error(`measured ${m.procs} of ${BARE_PROCS} bare python processes`);
  return m;
}

interface ExecutorRun {
  mem: Record<Kind | 'all', Mem>;
  executorBefore: number;
  executorAfter: number;
}

/** Stops `ex` (SIGTERM, SIGKILL after 60 s) and kills any of its descendants that outlive it. */
async function stopExecutor(ex: RunningExecutor): Promise<void> {
  const pids = descendants(ex.proc.pid as number);
  const timer = setTimeout(() => ex.proc.kill('SIGKILL'), 60_000);
  await ex.stop();
  clearTimeout(timer);
  for (const pid of pids) {
    if (!alive(pid)) continue;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
}

/** Python processes per kernel: the supervisor that owns the host's pipes and the user-code process it forks. */
const PYTHON_PER_KERNEL = 2;

/** The server's kernel launcher (one per server, not per session): measured apart from the kernels. */
function isLauncher(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('stoa_launcher.py');
  } catch {
    return false;
  }
}

async function runExecutor(label: string, config: Record<string, unknown>): Promise<ExecutorRun> {
  const ex = await startExecutor({ config });
  try {
    const pid = ex.proc.pid as number;
    const health = async () =>
      (await (await fetch(`${ex.url}/health`)).json()) as { kernels: number; sandbox: unknown };
    note(`${label}: executor pid ${pid}, sandbox ${JSON.stringify((await health()).sandbox)}`);
    const client = await connect(ex.mcpUrl);
    await client.call('demo_list_sessions', { summary_only: true });
    await sleep(500);
    const executorBefore = rssMb(pid);
    const before = descendants(pid).length;
    if (before) note(`${label}: ${before} descendant processes before opening sessions`);

    note(`${label}: opening ${SESSIONS} sessions (${CONCURRENCY} at a time)`);
    const t0 = performance.now();
    let next = 0;
    const worker = async () => {
      while (next < SESSIONS) {
        next++;
        const text = await client.call('execute_demo_code', { code: 'x = 1' });
        const r = JSON.parse(text) as { session_id?: string; success?: boolean };
        if (!r.session_id) throw new Error(`unexpected execute result: ${text}`);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    note(`${label}: opened ${SESSIONS} sessions in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

    await sleep(SETTLE_MS);
    const kernels = (await health()).kernels;
    if (kernels !== SESSIONS)
      throw new Error(`${label}: /health reports ${kernels} kernels in use, expected ${SESSIONS}`);
    const procs = descendants(pid);
    const mem = measure(procs.filter((p) => !isLauncher(p)));
    const launcher = measure(procs.filter(isLauncher)).all;
    if (launcher.procs) note(`${label}: kernel launcher (one per server): ${fmt(launcher, launcher.procs)}`);
    const executorAfter = rssMb(pid);
    const expected = SESSIONS * PYTHON_PER_KERNEL;
    if (mem.python.procs !== expected)
      throw new Error(
        `${label}: found ${mem.python.procs} python processes, expected ${expected} (${PYTHON_PER_KERNEL} per kernel)`,
      );
    for (const kind of ['python', 'bwrap', 'other', 'all'] as const)
      if (mem[kind].procs)
        note(
          `${label}: ${kind}: ${mem[kind].procs} procs, each ${fmt(mem[kind], mem[kind].procs)}; per session ${fmt(mem[kind], SESSIONS)}`,
        );
    note(`${label}: executor RSS ${executorBefore.toFixed(1)} → ${executorAfter.toFixed(1)} MiB`);
    await client.close();
    return { mem, executorBefore, executorAfter };
  } catch (err) {
    note(`${label} executor logs:\n${ex.logs()}`);
    throw err;
  } finally {
    const t0 = performance.now();
    await stopExecutor(ex);
    note(`${label}: executor stopped in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    rmSync(dirname(ex.dataDir), { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  quietNestLogger();
  if (!Number.isInteger(SESSIONS) || SESSIONS < 1)
    throw new Error(`IDLE_SESSIONS must be a positive integer, got ${process.env.IDLE_SESSIONS}`);
  const python = realPython();
  note(`python: ${python}; ${SESSIONS} sessions per executor`);
  const environment = { python };
  const sessions = { max_sessions: SESSIONS + 60, warm_pool: 0, idle_timeout_minutes: 60 };

  const bareProcs: ChildProcess[] = [];
  let bare: Mem;
  try {
    bare = await measureBare(python, bareProcs);
  } finally {
    for (const p of bareProcs) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
  }
  note(`bare-python: ${BARE_PROCS} procs, each ${fmt(bare, BARE_PROCS)}`);

  const sandboxed = await runExecutor('sandboxed', { environment, sessions });
  const unsandboxed = await runExecutor('unsandboxed', {
    environment,
    sandbox: { network: 'inherit', filesystem: 'host', user: 'server' },
    sessions,
  });

  const metrics = [
    ['rss_mb_per_session', 'rss'],
    ['uss_mb_per_session', 'uss'],
    ['pss_mb_per_session', 'pss'],
  ] as const;
  for (const [metric, key] of metrics) {
    emit({
      bench: BENCH,
      subject: 'bare-python',
      metric: metric.replace('per_session', 'per_process'),
      value: round2(bare[key] / BARE_PROCS),
      n: BARE_PROCS,
    });
  }
  for (const [subject, run] of [
    ['sandboxed-session', sandboxed],
    ['unsandboxed-session', unsandboxed],
  ] as const) {
    const procs = { python: run.mem.python.procs, bwrap: run.mem.bwrap.procs, other: run.mem.other.procs };
    for (const [metric, key] of metrics) {
      const value = run.mem.all[key] / SESSIONS;
      const line: Record<string, unknown> = {
        bench: BENCH,
        subject,
        metric,
        value: round2(value),
        n: SESSIONS,
        baseline: 'bare-python',
        ratio: round2(value / (bare[key] / BARE_PROCS)),
      };
      if (key === 'rss') line.goal_max = GOAL_RSS_MB;
      line.processes = procs;
      emit(line);
    }
  }
  for (const [metric, key] of metrics.slice(0, 2)) {
    emit({
      bench: BENCH,
      subject: 'sandbox-overhead',
      metric,
      value: round2(sandboxed.mem.bwrap[key] / SESSIONS),
      n: SESSIONS,
      measure: 'bwrap-processes',
    });
    emit({
      bench: BENCH,
      subject: 'sandbox-overhead',
      metric,
      value: round2((sandboxed.mem.all[key] - unsandboxed.mem.all[key]) / SESSIONS),
      n: SESSIONS,
      measure: 'sandboxed-minus-unsandboxed',
    });
  }
  for (const [config, run] of [
    ['sandboxed', sandboxed],
    ['unsandboxed', unsandboxed],
  ] as const) {
    emit({
      bench: BENCH,
      subject: 'executor',
      metric: `rss_mb_delta_${SESSIONS}_sessions`,
      value: round2(run.executorAfter - run.executorBefore),
      n: SESSIONS,
      config,
      rss_mb_before: round2(run.executorBefore),
      rss_mb_after: round2(run.executorAfter),
    });
  }
}

runBench(BENCH, main);
