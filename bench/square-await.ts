/**
 * square-await: post → wake latency of chat_await_update, on the replica that took the post and on another
 * replica (two squares sharing PostgreSQL and Redis). Measured from sending the post to the waiter's answer, so
 * the post's own round trip is inside; the baseline, same run, is that post round trip alone. Goal p99 ≤ 50 ms.
 * Calls are raw 2026-07-28 tool calls over keep-alive connections (undici), as square-throughput sends them.
 */
import { randomBytes } from 'node:crypto';
import { ADMIN } from '../test/support/admin';
import { dbTarget, TEST_REDIS_URL } from '../test/support/databases';
import { startSquare } from '../test/support/square-process';
import { emitFigures, note, noteLoadAverage, rounds, runBench, summarize } from './lib/bench';
import { squarePool } from './lib/square';

const BENCH = 'square-await';
const ROUNDS = rounds(200, 3);

async function waiting(origin: string, channel: string): Promise<void> {
  for (;;) {
    const w = (await (await fetch(`${origin}/admin/v1/square/waiters`, { headers: ADMIN })).json()) as {
      waiters: Record<string, number>;
    };
    if (w.waiters[channel]) return;
    await new Promise((r) => setImmediate(r));
  }
}

async function main(): Promise<void> {
  noteLoadAverage();
  const db = dbTarget('postgres');
  const config = {
    name: `sqb${randomBytes(4).toString('hex')}`,
    database: db.database,
    redis_url: TEST_REDIS_URL,
    chat: { max_messages_per_minute: 1_000_000 },
  };
  const a = await startSquare(config);
  const b = await startSquare(config);
  // Keep-alive raw calls (undici): a fetch per call would add the client's own overhead to both figures.
  const onA = squarePool(a.url, 4);
  const onB = squarePool(b.url, 4);
  try {
    await onA.call('poster', 'register', { name: 'poster' });
    await onA.call('waiter', 'register', { name: 'waiter' });
    const postOnly: number[] = [];
    const wake = { same: [] as number[], cross: [] as number[] };
    for (const [subject, waiter, origin] of [
      ['same', onA, a.url],
      ['cross', onB, b.url],
    ] as const) {
      note(`${subject}-replica wake: ${ROUNDS} rounds`);
      for (let i = 0; i < ROUNDS; i++) {
        const channel = `#${subject}-${i % 10}`;
        const woke = waiter
          .call('waiter', 'chat_await_update', { channel, nmsg: 1, timeout: 10 })
          .then(() => performance.now());
        await waiting(origin, channel);
        const sent = performance.now();
        await onA.call('poster', 'chat_post_message', { channel, content: `ping ${i}` });
        postOnly.push(performance.now() - sent);
        wake[subject].push((await woke) - sent);
      }
    }
    const baseline = { name: 'post_roundtrip', summary: summarize(postOnly) };
    emitFigures(BENCH, 'post_roundtrip', baseline.summary);
    emitFigures(BENCH, 'wake_same_replica', summarize(wake.same), { ...baseline, goalMax: 50 });
    emitFigures(BENCH, 'wake_cross_replica', summarize(wake.cross), { ...baseline, goalMax: 50 });
  } finally {
    await Promise.allSettled([onA.close(), onB.close()]);
    await Promise.allSettled([a.stop(), b.stop()]);
    await db.cleanup();
  }
}

runBench(BENCH, main);
