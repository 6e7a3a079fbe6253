/** One dependency a server needs to serve requests (database, Redis, kernel pool, an upstream). */
export interface ReadinessCheck {
  name: string;
  /** Resolves (optionally with details to show) when the dependency works; rejects with the reason. */
  check: () => Promise<Record<string, unknown> | void>;
}

/** The outcome of one check, as shown on `/health/ready`. */
export type CheckResult = { ok: boolean; ms: number; error?: string } & Record<string, unknown>;

/**
 * Runs every check at once, each bounded by `timeoutMs` (a hung dependency is reported as down, never
 * waited on), and says which failed and why.
 */
export async function runReadiness(
  checks: readonly ReadinessCheck[],
  timeoutMs = 2000,
): Promise<{ ready: boolean; checks: Record<string, CheckResult> }> {
  const results = await Promise.all(checks.map(async (c) => [c.name, await probe(c.check, timeoutMs)] as const));
  return { ready: results.every(([, r]) => r.ok), checks: Object.fromEntries(results) };
}

/** Runs one check bounded by `timeoutMs`: a failure (or a hang) is reported with its reason, never thrown. */
export async function probe(check: ReadinessCheck['check'], timeoutMs = 2000): Promise<CheckResult> {
  const t0 = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs)),
  );
  try {
    const details = await Promise.race([check(), timeout]);
    return { ok: true, ms: round(performance.now() - t0), ...(details ?? {}) };
  } catch (err) {
    return { ok: false, ms: round(performance.now() - t0), error: (err as Error).message };
  } finally {
    clearTimeout(timer);
  }
}

const round = (ms: number) => Math.round(ms * 10) / 10;
