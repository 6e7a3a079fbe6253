import type { Upstream, UpstreamPool } from '@stoa/connectors';
import type { DispatcherConfig } from './dispatcher.config';

/**
 * Which worker takes new work: weighted round robin (smooth, as nginx), least in-flight calls, or sticky per
 * principal (round robin for the first assignment). Drained or unhealthy workers take nothing new.
 */
export class Balancer {
  readonly inFlight = new Map<string, number>();
  readonly drained = new Set<string>();
  private readonly current = new Map<string, number>();
  private readonly weights: Map<string, number>;

  constructor(
    private readonly pool: UpstreamPool,
    private readonly config: DispatcherConfig,
  ) {
    this.weights = new Map(config.workers.map((w) => [w.name, w.weight]));
  }

  /** Healthy, undrained workers in config order. */
  candidates(): Upstream[] {
    return this.pool.upstreams().filter((u) => u.healthy && !this.drained.has(u.name));
  }

  /** A worker for new work, or undefined when none is healthy. */
  pick(): Upstream | undefined {
    const c = this.candidates();
    if (!c.length) return undefined;
    if (this.config.strategy === 'least_loaded') {
      return c.reduce((best, u) => ((this.inFlight.get(u.name) ?? 0) < (this.inFlight.get(best.name) ?? 0) ? u : best));
    }
    let total = 0;
    let best: Upstream | undefined;
    for (const u of c) {
      const w = this.weights.get(u.name) ?? 1;
      total += w;
      const cw = (this.current.get(u.name) ?? 0) + w;
      this.current.set(u.name, cw);
      if (!best || cw > (this.current.get(best.name) ?? 0)) best = u;
    }
    this.current.set(best!.name, (this.current.get(best!.name) ?? 0) - total);
    return best;
  }

  /** Runs `fn` counted as in flight on `worker`. */
  async track<T>(worker: Upstream, fn: () => Promise<T>): Promise<T> {
    this.inFlight.set(worker.name, (this.inFlight.get(worker.name) ?? 0) + 1);
    try {
      return await fn();
    } finally {
      this.inFlight.set(worker.name, (this.inFlight.get(worker.name) ?? 1) - 1);
    }
  }
}
