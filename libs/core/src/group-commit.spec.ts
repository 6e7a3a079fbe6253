import { describe, expect, it } from 'vitest';
import { GroupCommit } from '@stoa/core';

/** A writer whose writes finish only when the test lets them, recording each batch it was given. */
function gatedWriter(fail?: (item: number) => boolean) {
  const batches: number[][] = [];
  const gates: (() => void)[] = [];
  const write = async (items: number[]) => {
    batches.push(items);
    await new Promise<void>((r) => gates.push(r));
    if (fail && items.some(fail)) throw new Error(`bad item in ${items.join(',')}`);
    return items.map((i) => i * 10);
  };
  const open = async () => {
    while (!gates.length) await new Promise((r) => setImmediate(r));
    gates.shift()!();
  };
  return { batches, write, open };
}

describe('GroupCommit', () => {
  it('writes the first item at once and everything queued behind it in the next write, in order', async () => {
    const w = gatedWriter();
    const gc = new GroupCommit(w.write);
    const first = gc.submit(1);
    expect(w.batches).toEqual([[1]]); // no timer: written immediately
    const rest = [2, 3, 4].map((i) => gc.submit(i));
    await w.open();
    expect(await first).toBe(10);
    await w.open();
    expect(await Promise.all(rest)).toEqual([20, 30, 40]);
    expect(w.batches).toEqual([[1], [2, 3, 4]]);
    await gc.flush();
    expect(gc.size).toBe(0);
  });

  it('caps a batch at maxBatch', async () => {
    const w = gatedWriter();
    const gc = new GroupCommit(w.write, 2);
    const all = [1, 2, 3, 4, 5].map((i) => gc.submit(i));
    for (let i = 0; i < 3; i++) await w.open();
    expect(await Promise.all(all)).toEqual([10, 20, 30, 40, 50]);
    expect(w.batches).toEqual([[1], [2, 3], [4, 5]]);
  });

  it('retries a failed batch item by item, so only the bad item fails its caller', async () => {
    const w = gatedWriter((i) => i === 3);
    const gc = new GroupCommit(w.write);
    const first = gc.submit(1);
    const rest = [2, 3, 4].map((i) => gc.submit(i).catch((e: Error) => e.message));
    for (let i = 0; i < 5; i++) await w.open(); // [1], [2,3,4] fails, then [2], [3], [4]
    expect(await first).toBe(10);
    expect(await Promise.all(rest)).toEqual([20, 'bad item in 3', 40]);
    expect(w.batches).toEqual([[1], [2, 3, 4], [2], [3], [4]]);
  });
});
