import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  type ConnectionDriver,
  ConnectionState,
  ConnectionSupervisor,
  RECONNECT_MAX_MS,
} from './connection-supervisor';

/** A driver whose server is up or down at the test's word; it records what the supervisor asked. */
class FakeDriver implements ConnectionDriver {
  up = true;
  calls: string[] = [];
  pendingCheck: { resolve: () => void; reject: (err: Error) => void } | undefined;
  holdChecks = false;

  connect(): Promise<void> {
    this.calls.push('connect');
    return this.up ? Promise.resolve() : Promise.reject(new Error('connect ECONNREFUSED'));
  }

  check(): Promise<void> {
    this.calls.push('check');
    if (this.holdChecks) return new Promise((resolve, reject) => (this.pendingCheck = { resolve, reject }));
    return this.up ? Promise.resolve() : Promise.reject(new Error('ping timed out'));
  }

  disconnect(): Promise<void> {
    this.calls.push('disconnect');
    return Promise.resolve();
  }
}

const HEALTH_MS = 1000;
const BASE_MS = 100;

describe('ConnectionSupervisor', () => {
  let driver: FakeDriver;
  let supervisor: ConnectionSupervisor;
  let states: string[];

  beforeEach(() => {
    vi.useFakeTimers();
    driver = new FakeDriver();
    supervisor = new ConnectionSupervisor(driver, { healthIntervalMs: HEALTH_MS, reconnectBaseMs: BASE_MS });
    states = [];
    supervisor.on('changed', (state, previous) => states.push(`${previous}→${state}`));
  });
  afterEach(async () => {
    await supervisor.close();
    vi.useRealTimers();
  });

  it('connects on start and checks the connection every health interval', async () => {
    await supervisor.start();
    expect(supervisor.state).toBe(ConnectionState.connected);
    expect(supervisor.connectedAt).toBeInstanceOf(Date);
    await vi.advanceTimersByTimeAsync(HEALTH_MS * 3);
    expect(driver.calls).toEqual(['connect', 'check', 'check', 'check']);
    expect(states).toEqual(['connecting→connected']);
  });

  it('reports a failed first attempt as unavailable with its error and the next retry time', async () => {
    driver.up = false;
    await supervisor.start();
    expect(supervisor.state).toBe(ConnectionState.unavailable);
    expect((supervisor.lastError as Error).message).toBe('connect ECONNREFUSED');
    const wait = supervisor.nextRetryAt!.getTime() - Date.now();
    expect(wait).toBeGreaterThanOrEqual(BASE_MS / 2);
    expect(wait).toBeLessThanOrEqual(BASE_MS);
  });

  it('retries in the background with doubling, jittered delays capped at 30 s', async () => {
    driver.up = false;
    await supervisor.start();
    const waits: number[] = [];
    for (let i = 0; i < 12; i++) {
      const wait = supervisor.nextRetryAt!.getTime() - Date.now();
      waits.push(wait);
      await vi.advanceTimersByTimeAsync(wait);
    }
    waits.forEach((wait, n) => {
      const ceiling = Math.min(RECONNECT_MAX_MS, BASE_MS * 2 ** n);
      expect(wait).toBeGreaterThanOrEqual(Math.floor(ceiling / 2));
      expect(wait).toBeLessThanOrEqual(ceiling);
    });
    expect(driver.calls.filter((c) => c === 'connect')).toHaveLength(13);
    expect(states).toEqual(['connecting→unavailable']);
  });

  it('draws different delays for supervisors failing together, so they do not retry in lockstep', async () => {
    driver.up = false;
    const others = Array.from(
      { length: 8 },
      () => new ConnectionSupervisor(driver, { healthIntervalMs: HEALTH_MS, reconnectBaseMs: 10_000 }),
    );
    await Promise.all(others.map((s) => s.start()));
    const waits = new Set(others.map((s) => s.nextRetryAt!.getTime()));
    await Promise.all(others.map((s) => s.close()));
    expect(waits.size).toBeGreaterThan(1);
  });

  it('comes back once the server answers, with a fresh backoff', async () => {
    driver.up = false;
    await supervisor.start();
    await vi.advanceTimersByTimeAsync(supervisor.nextRetryAt!.getTime() - Date.now());
    driver.up = true;
    await vi.advanceTimersByTimeAsync(supervisor.nextRetryAt!.getTime() - Date.now());
    expect(supervisor.state).toBe(ConnectionState.connected);
    expect(supervisor.nextRetryAt).toBeUndefined();
    expect(states).toEqual(['connecting→unavailable', 'unavailable→connected']);
    driver.up = false;
    await vi.advanceTimersByTimeAsync(HEALTH_MS);
    expect(supervisor.nextRetryAt!.getTime() - Date.now()).toBeLessThanOrEqual(BASE_MS);
  });

  it('marks a connection whose health check fails unavailable, releasing it, and keeps the error after recovery', async () => {
    await supervisor.start();
    driver.up = false;
    await vi.advanceTimersByTimeAsync(HEALTH_MS);
    expect(supervisor.state).toBe(ConnectionState.unavailable);
    expect(supervisor.connectedAt).toBeUndefined();
    expect(driver.calls).toEqual(['connect', 'check', 'disconnect']);
    driver.up = true;
    await vi.advanceTimersByTimeAsync(BASE_MS);
    expect(supervisor.state).toBe(ConnectionState.connected);
    expect((supervisor.lastError as Error).message).toBe('ping timed out');
  });

  it('goes unavailable at once when told the connection was lost', async () => {
    await supervisor.start();
    supervisor.lost(new Error('the connection closed'));
    expect(supervisor.state).toBe(ConnectionState.unavailable);
    expect(driver.calls).toEqual(['connect', 'disconnect']);
  });

  it('runs one check at a time: concurrent callers share it', async () => {
    await supervisor.start();
    driver.holdChecks = true;
    const both = Promise.all([supervisor.check(), supervisor.check()]);
    driver.pendingCheck!.resolve();
    expect(await both).toEqual([true, true]);
    expect(driver.calls).toEqual(['connect', 'check']);
  });

  it('ignores a check that fails after its connection was replaced', async () => {
    await supervisor.start();
    driver.holdChecks = true;
    const stale = supervisor.check();
    const pending = driver.pendingCheck!;
    supervisor.lost(new Error('the connection closed'));
    await vi.advanceTimersByTimeAsync(BASE_MS);
    expect(supervisor.state).toBe(ConnectionState.connected);
    pending.reject(new Error('late failure of the old connection'));
    expect(await stale).toBe(false);
    expect(supervisor.state).toBe(ConnectionState.connected);
  });

  it('reconnects on demand with a fresh backoff, passing through connecting', async () => {
    await supervisor.start();
    await supervisor.reconnect();
    expect(supervisor.state).toBe(ConnectionState.connected);
    expect(driver.calls).toEqual(['connect', 'disconnect', 'connect']);
    expect(states).toEqual(['connecting→connected', 'connected→connecting', 'connecting→connected']);
  });

  it('close() stops every timer, releases the connection and aborts what is under way', async () => {
    const signals: AbortSignal[] = [];
    const aborting = new ConnectionSupervisor(
      {
        connect: (signal) => (signals.push(signal), Promise.resolve()),
        check: () => Promise.resolve(),
        disconnect: () => driver.disconnect(),
      },
      { healthIntervalMs: HEALTH_MS, reconnectBaseMs: BASE_MS },
    );
    await aborting.start();
    expect(vi.getTimerCount()).toBe(1);
    await aborting.close();
    expect(vi.getTimerCount()).toBe(0);
    expect(signals[0]?.aborted).toBe(true);
    expect(driver.calls).toEqual(['disconnect']);
    expect(await aborting.check()).toBe(false);
  });
});
