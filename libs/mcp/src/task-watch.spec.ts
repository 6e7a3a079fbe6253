import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Principal } from '@stoa/core';
import type { TaskBackend, TaskView } from './mcp.types';
import { taskChangeKey, watchTask } from './task-watch';

const alice = { id: 'alice', scopes: [] } as unknown as Principal;
const bob = { id: 'bob', scopes: [] } as unknown as Principal;
const view = (status: TaskView['status'], at: string): TaskView => ({
  taskId: 'j_1',
  status,
  createdAt: '2026-12-04T00:00:00.000Z',
  lastUpdatedAt: at,
  ttlMs: 60_000,
  pollIntervalMs: 200,
});

/** A backend without watch(): alice's one task, whose view the test sets; counts reads. */
function polled(first: TaskView) {
  let current = first;
  let reads = 0;
  const backend: TaskBackend = {
    get: (p, id) => ((reads += 1), Promise.resolve(p.id === 'alice' && id === 'j_1' ? current : undefined)),
    cancel: () => Promise.resolve(undefined),
  };
  return { backend, set: (v: TaskView) => void (current = v), reads: () => reads };
}

describe('watchTask', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('polls a backend without watch() at the task poll interval and reports each change once', async () => {
    const { backend, set } = polled(view('working', 'a'));
    const seen: string[] = [];
    await watchTask(backend, alice, 'j_1', (t) => seen.push(t.status));
    await vi.advanceTimersByTimeAsync(450);
    set(view('completed', 'b'));
    await vi.advanceTimersByTimeAsync(200);
    expect(seen).toEqual(['working', 'completed']);
  });

  it('stops polling once the task has ended', async () => {
    const { backend, set, reads } = polled(view('working', 'a'));
    await watchTask(backend, alice, 'j_1', () => undefined);
    set(view('failed', 'b'));
    await vi.advanceTimersByTimeAsync(200);
    const after = reads();
    await vi.advanceTimersByTimeAsync(2000);
    expect(reads()).toBe(after);
  });

  it("answers undefined for someone else's task, like an unknown one", async () => {
    const { backend } = polled(view('working', 'a'));
    expect(await watchTask(backend, bob, 'j_1', () => undefined)).toBeUndefined();
    expect(await watchTask(backend, alice, 'j_2', () => undefined)).toBeUndefined();
  });

  it('reads no more after stop', async () => {
    const { backend, reads } = polled(view('working', 'a'));
    const stop = await watchTask(backend, alice, 'j_1', () => undefined);
    stop?.();
    await vi.advanceTimersByTimeAsync(2000);
    expect(reads()).toBe(1);
  });
});

describe('taskChangeKey', () => {
  it('changes with the pending input keys even when status and time stay', () => {
    const waiting = { ...view('input_required', 'a'), inputRequests: { name: {} as never } };
    const more = { ...waiting, inputRequests: { name: {} as never, confirm: {} as never } };
    expect(taskChangeKey(waiting)).not.toBe(taskChangeKey(more));
  });
});
