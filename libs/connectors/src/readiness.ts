import { probe as probeOnce } from '@stoa/core';
import type { UpstreamPool } from './upstream-pool';

/** One dependency's readiness: `ok`, and why not. */
export interface Check {
  ok: boolean;
  error?: string;
  [detail: string]: unknown;
}

/** `/health/ready` of a connector: every dependency by name; `ready` only when all of them are. */
export interface Readiness {
  status: 'ready' | 'not_ready';
  server: string;
  checks: Record<string, Check | Record<string, Check>>;
  /** What is failing, when not ready. */
  message?: string;
}

/** Each upstream (or worker) by name, as of its last health check (every `health_interval_seconds`). */
export function upstreamChecks(pool: UpstreamPool): Record<string, Check> {
  return Object.fromEntries(
    pool.status().map((s) => {
      const ok = s.state === 'healthy';
      const error = ok ? undefined : (s.last_error ?? (s.state === 'connecting' ? 'not connected yet' : 'unavailable'));
      return [s.name, { ok, state: s.state, checked_at: s.checked_at, ...(error ? { error } : {}) }];
    }),
  );
}

/** A live probe (a `SELECT 1`, a Redis PING), bounded in time; a failure is reported, never thrown. */
export function probe(run: () => Promise<unknown>, detail: Record<string, unknown> = {}): Promise<Check> {
  return probeOnce(async () => (await run(), detail));
}

/** The readiness answer, naming what is failing; send it with {@link readinessStatus}. */
export function readiness(server: string, checks: Readiness['checks']): Readiness {
  const failing = Object.entries(checks).flatMap(([name, c]) =>
    isCheck(c)
      ? c.ok
        ? []
        : [name]
      : Object.entries(c)
          .filter(([, x]) => !x.ok)
          .map(([n]) => `${name}.${n}`),
  );
  if (!failing.length) return { status: 'ready', server, checks };
  return {
    status: 'not_ready',
    server,
    checks,
    message: `Not ready: ${failing.join(', ')} failing; see each check's error. The connector retries on its own.`,
  };
}

/** 200 when ready, 503 when any check fails. */
export function readinessStatus(r: Readiness): number {
  return r.status === 'ready' ? 200 : 503;
}

function isCheck(c: Check | Record<string, Check>): c is Check {
  return typeof (c as Check).ok === 'boolean';
}
