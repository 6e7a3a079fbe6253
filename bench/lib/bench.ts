import { loadavg } from 'node:os';
import { Logger, type LoggerService } from '@nestjs/common';

/** Nearest-rank percentile of `samples` (ms); p in (0, 100]. */
export function percentile(samples: readonly number[], p: number): number {
  if (!samples.length) throw new Error('percentile of no samples');
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1] as number;
}

export interface Summary {
  p50_ms: number;
  p99_ms: number;
  n: number;
}

export function summarize(samples: readonly number[]): Summary {
  return { p50_ms: percentile(samples, 50), p99_ms: percentile(samples, 99), n: samples.length };
}

const round = (n: number, digits = 3): number => Number(n.toFixed(digits));

/** Writes one JSON result line to stdout (the only thing a bench prints there). */
export function emit(line: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

/**
 * Emits p50_ms and p99_ms of `subject`; with a baseline, each line carries the baseline's name and
 * subject / baseline at the same percentile as `ratio`.
 */
export function emitFigures(
  bench: string,
  subject: string,
  s: Summary,
  baseline?: { name: string; summary: Summary; goalMax?: number },
): void {
  for (const metric of ['p50_ms', 'p99_ms'] as const) {
    const line: Record<string, unknown> = { bench, subject, metric, value: round(s[metric]), n: s.n };
    if (baseline) {
      line.baseline = baseline.name;
      line.ratio = round(s[metric] / baseline.summary[metric]);
      if (baseline.goalMax !== undefined && metric === 'p50_ms') line.goal_max = baseline.goalMax;
    }
    emit(line);
  }
}

/** Elapsed ms of `fn`. */
export async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

/** Progress / diagnostics go to stderr so stdout stays JSON lines. */
export function note(msg: string): void {
  process.stderr.write(`[bench] ${msg}\n`);
}

/** Notes the load average now and again at exit: other work on the machine skews the figures. */
export function noteLoadAverage(): void {
  const load = () =>
    loadavg()
      .map((l) => l.toFixed(2))
      .join(' ');
  note(`load average at start: ${load()} (other work on the machine skews the figures)`);
  process.on('exit', () => note(`load average at end: ${load()}`));
}

/** Nest's default logger writes to stdout; route warnings and errors to stderr, drop the rest. */
export function quietNestLogger(): void {
  const toStderr =
    (level: string) =>
    (message: unknown, ...rest: unknown[]) =>
      process.stderr.write(
        `[nest ${level}] ${typeof message === 'string' ? message : JSON.stringify(message)} ${rest.map(String).join(' ')}\n`,
      );
  const logger: LoggerService = {
    log: () => undefined,
    warn: toStderr('warn'),
    error: toStderr('error'),
    debug: () => undefined,
    verbose: () => undefined,
  };
  Logger.overrideLogger(logger);
}

/** Runs a bench's main and exits: 0 on success, 1 with the stack on failure (open sockets never keep it alive). */
export function runBench(bench: string, main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`${bench} failed: ${err instanceof Error ? err.stack : String(err)}\n`);
      process.exit(1);
    },
  );
}

/** `BENCH_SMOKE=1` (set by `npm run bench -- --smoke`): every bench runs once with a few rounds, to prove it starts and runs. */
export const SMOKE = process.env.BENCH_SMOKE === '1';

/** A round count: `full` normally, at most `smoke` in smoke mode. */
export function rounds(full: number, smoke = 2): number {
  return SMOKE ? Math.min(full, smoke) : full;
}
