import { describe, expect, it } from 'vitest';
import type { Upstream, UpstreamPool } from '@stoa/connectors';
import { Balancer } from './balancer';
import { dispatcherConfigSchema } from './dispatcher.config';

/** The two things the balancer reads from a worker; the pool's health loop flips `healthy`. */
type FakeWorker = Pick<Upstream, 'name'> & { healthy: boolean };

function setup(
  strategy: string,
  weights: Record<string, number>,
): { balancer: Balancer; workers: FakeWorker[]; picks: (n: number) => (string | undefined)[] } {
  const workers: FakeWorker[] = Object.keys(weights).map((name) => ({ name, healthy: true }));
  const config = dispatcherConfigSchema.parse({
    name: 'd',
    strategy,
    workers: Object.entries(weights).map(([name, weight], i) => ({
      name,
      weight,
      url: `http://127.0.0.1:${9001 + i}`,
    })),
  });
  // A fake of the pool's one method the balancer uses; the workers stand in for Upstreams (name + health only).
  const pool = { upstreams: () => workers as unknown as readonly Upstream[] } satisfies Pick<UpstreamPool, 'upstreams'>;
  const balancer = new Balancer(pool as unknown as UpstreamPool, config);
  const picks = (n: number) => Array.from({ length: n }, () => balancer.pick()?.name);
  return { balancer, workers, picks };
}

function deferred(): { promise: Promise<string>; resolve: (v: string) => void } {
  let resolve!: (v: string) => void;
  const promise = new Promise<string>((r) => (resolve = r));
  return { promise, resolve };
}

describe('Balancer, round robin', () => {
  it('rotates through equal-weight workers in config order, ties going to the first', () => {
    expect(setup('round_robin', { a: 1, b: 1, c: 1 }).picks(6)).toEqual(['a', 'b', 'c', 'a', 'b', 'c']);
  });

  it('spreads weighted picks smoothly, as nginx does (5:1:1 → a a b a c a a)', () => {
    expect(setup('round_robin', { a: 5, b: 1, c: 1 }).picks(14)).toEqual([...'aabacaa', ...'aabacaa']);
  });

  it('gives each worker its weight share over a full cycle', () => {
    const picks = setup('round_robin', { a: 3, b: 2 }).picks(50);
    expect(picks.filter((p) => p === 'a')).toHaveLength(30);
    expect(picks.filter((p) => p === 'b')).toHaveLength(20);
  });

  it('skips an unhealthy worker and takes it back when it recovers', () => {
    const { workers, picks } = setup('round_robin', { a: 1, b: 1 });
    workers[1]!.healthy = false;
    expect(picks(3)).toEqual(['a', 'a', 'a']);
    workers[1]!.healthy = true;
    expect(picks(4)).toEqual(['a', 'b', 'a', 'b']);
  });

  it('gives a drained worker nothing new', () => {
    const { balancer, picks } = setup('round_robin', { a: 1, b: 1 });
    balancer.drained.add('a');
    expect(picks(3)).toEqual(['b', 'b', 'b']);
    expect(balancer.candidates().map((u) => u.name)).toEqual(['b']);
  });

  it('picks nothing when every worker is unhealthy or drained', () => {
    const { balancer, workers, picks } = setup('round_robin', { a: 1, b: 1 });
    workers[0]!.healthy = false;
    balancer.drained.add('b');
    expect(picks(2)).toEqual([undefined, undefined]);
  });

  it('assigns first sessions round robin under sticky_session (affinity is kept elsewhere)', () => {
    expect(setup('sticky_session', { a: 1, b: 2 }).picks(3)).toEqual(['b', 'a', 'b']);
  });
});

describe('Balancer, least loaded', () => {
  it('picks the worker with the fewest calls in flight', async () => {
    const { balancer, picks } = setup('least_loaded', { a: 1, b: 1, c: 1 });
    const slow = deferred();
    const [a, b] = balancer.candidates();
    const first = balancer.track(a!, () => slow.promise);
    const second = balancer.track(b!, () => slow.promise);
    expect(picks(2)).toEqual(['c', 'c']);
    slow.resolve('done');
    expect(await Promise.all([first, second])).toEqual(['done', 'done']);
    expect(picks(1)).toEqual(['a']);
  });

  it('breaks ties by config order and ignores weights', () => {
    expect(setup('least_loaded', { a: 1, b: 9 }).picks(3)).toEqual(['a', 'a', 'a']);
  });

  it('does not pick an idle worker that is unhealthy', async () => {
    const { balancer, workers, picks } = setup('least_loaded', { a: 1, b: 1 });
    const slow = deferred();
    const running = balancer.track(balancer.candidates()[0]!, () => slow.promise);
    workers[1]!.healthy = false;
    expect(picks(1)).toEqual(['a']);
    slow.resolve('ok');
    await running;
  });
});

describe('Balancer.track', () => {
  it('counts a call in flight while it runs and returns its value', async () => {
    const { balancer } = setup('least_loaded', { a: 1 });
    const slow = deferred();
    const worker = balancer.candidates()[0]!;
    const call = balancer.track(worker, () => slow.promise);
    expect(balancer.inFlight.get('a')).toBe(1);
    slow.resolve('result');
    expect(await call).toBe('result');
    expect(balancer.inFlight.get('a')).toBe(0);
  });

  it('stops counting a call that fails and passes its error on', async () => {
    const { balancer } = setup('least_loaded', { a: 1 });
    const worker = balancer.candidates()[0]!;
    await expect(balancer.track(worker, () => Promise.reject(new Error('worker down')))).rejects.toThrow('worker down');
    expect(balancer.inFlight.get('a')).toBe(0);
  });
});
