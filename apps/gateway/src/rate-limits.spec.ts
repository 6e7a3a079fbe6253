import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { gatewayPolicySchema } from './gateway.config';
import { RateLimits, type RateLimited } from './rate-limits.service';

// In-memory limiters (no Redis URL); the shared Redis budget is covered by apps/gateway/test/gateway.e2e-spec.ts.
// Fake timers move rate-limiter-flexible's clock (Date.now and its expiry timers) instead of waiting a minute.
const limits = (raw: Record<string, unknown>): RateLimits =>
  new RateLimits(gatewayPolicySchema.parse(raw), undefined, 'test:rl');

async function calls(rl: RateLimits, n: number, principal: string, tool: string): Promise<(RateLimited | undefined)[]> {
  const out: (RateLimited | undefined)[] = [];
  for (let i = 0; i < n; i++) out.push(await rl.consume(principal, tool));
  return out;
}

const refused = (limit: number, retryAfter: number): RateLimited => ({
  message: `Rate limit exceeded: maximum ${limit} calls per minute. Please wait and try again.`,
  retry_after: retryAfter,
});

beforeEach(() => {
  vi.useFakeTimers({ now: new Date('2026-01-01T00:00:00Z') });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('RateLimits', () => {
  it('allows every call when no limit is configured', async () => {
    expect((await calls(limits({}), 200, 'alice', 'execute_demo_code')).every((r) => r === undefined)).toBe(true);
  });

  it('refuses the call after max_calls_per_minute with the reference message and a full minute to wait', async () => {
    const rl = limits({ max_calls_per_minute: 3 });
    expect(await calls(rl, 4, 'alice', 'execute_demo_code')).toEqual([undefined, undefined, undefined, refused(3, 60)]);
  });

  it('counts the remaining wait down from the first call of the window', async () => {
    const rl = limits({ max_calls_per_minute: 1 });
    await rl.consume('alice', 'execute_demo_code');
    await vi.advanceTimersByTimeAsync(20_000);
    expect(await rl.consume('alice', 'execute_demo_code')).toEqual(refused(1, 40));
  });

  it('never tells a caller to retry after less than one second', async () => {
    const rl = limits({ max_calls_per_minute: 1 });
    await rl.consume('alice', 'execute_demo_code');
    await vi.advanceTimersByTimeAsync(59_800);
    expect(await rl.consume('alice', 'execute_demo_code')).toEqual(refused(1, 1));
  });

  it('opens a fresh budget one minute after the window began (a fixed window, not sliding)', async () => {
    const rl = limits({ max_calls_per_minute: 2 });
    await rl.consume('alice', 'execute_demo_code');
    await vi.advanceTimersByTimeAsync(59_000);
    await rl.consume('alice', 'execute_demo_code');
    expect(await rl.consume('alice', 'execute_demo_code')).toEqual(refused(2, 1));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await calls(rl, 3, 'alice', 'execute_demo_code')).toEqual([undefined, undefined, refused(2, 60)]);
  });

  it('keeps one budget per principal', async () => {
    const rl = limits({ max_calls_per_minute: 1 });
    expect(await calls(rl, 2, 'alice', 'execute_demo_code')).toEqual([undefined, refused(1, 60)]);
    expect(await rl.consume('bob', 'execute_demo_code')).toBeUndefined();
  });

  it('shares the overall budget across tools', async () => {
    const rl = limits({ max_calls_per_minute: 2 });
    await rl.consume('alice', 'execute_demo_code');
    await rl.consume('alice', 'demo_check_job');
    expect(await rl.consume('alice', 'demo_send')).toEqual(refused(2, 60));
  });

  it('applies a tool limit only to the tools its glob matches, with its own number in the message', async () => {
    const rl = limits({ tool_limits: { 'execute_*_code': 1 } });
    expect(await calls(rl, 2, 'alice', 'execute_demo_code')).toEqual([undefined, refused(1, 60)]);
    expect(await calls(rl, 5, 'alice', 'demo_check_job')).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });

  it('keeps separate budgets for tool limits whose globs overlap; the one that refuses leaves the other uncharged', async () => {
    const rl = limits({ tool_limits: { 'execute_*': 3, '*_code': 1 } });
    expect(await calls(rl, 2, 'alice', 'execute_demo_code')).toEqual([undefined, refused(1, 60)]);
    expect(await calls(rl, 3, 'alice', 'execute_other')).toEqual([undefined, undefined, refused(3, 60)]);
  });

  it('refuses on the overall limit even when the tool limit has room', async () => {
    const rl = limits({ max_calls_per_minute: 1, tool_limits: { 'execute_*_code': 10 } });
    expect(await calls(rl, 2, 'alice', 'execute_demo_code')).toEqual([undefined, refused(1, 60)]);
  });

  it('does not charge the overall budget for a call a tool limit refused', async () => {
    const rl = limits({ max_calls_per_minute: 3, tool_limits: { 'execute_*_code': 1 } });
    expect(await calls(rl, 3, 'alice', 'execute_demo_code')).toEqual([undefined, refused(1, 60), refused(1, 60)]);
    expect(await calls(rl, 2, 'alice', 'demo_check_job')).toEqual([undefined, undefined]);
  });
});
