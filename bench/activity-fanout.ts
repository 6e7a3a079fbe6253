/**
 * activity-fanout: events posted to the activity app at a fixed rate (500 events/s, in batches of 5 as a
 * publisher sends them) while 20 SSE clients read the live stream; post → seen latency at every client, next to
 * the POST's own round trip (the same run's baseline). Goal: p99 post → seen ≤ 250 ms.
 */
import { openStream, startActivity, type SseReader } from '../test/support/activity';
import { emit, emitFigures, note, percentile, rounds, runBench, summarize } from './lib/bench';

const BENCH = 'activity-fanout';
const CLIENTS = 20;
const RATE = 500; // events per second
const BATCH = 5;
const SECONDS = rounds(10, 1);

async function main(): Promise<void> {
  const app = await startActivity(); // the shipped defaults (client_buffer_events 100)
  const readers: SseReader[] = [];
  try {
    const cookie = await app.cookie();
    for (let i = 0; i < CLIENTS; i++) {
      const r = await openStream(`${app.url}/stream`, { cookie });
      await r.waitFor((es) => es.some((e) => e.event === 'replayed'));
      readers.push(r);
    }
    const sentAt = new Map<string, number>();
    const seen: number[] = [];
    const counts = new Map<string, number>();
    // Latency is taken when each client parses the event (as a browser's onmessage would run).
    readers.forEach((r) => {
      const start = r.events.length;
      let idx = start;
      void r
        .waitFor((events) => {
          for (; idx < events.length; idx++) {
            const e = events[idx]!;
            if (e.event !== 'activity') continue;
            const seq = (JSON.parse(e.data) as { description: string }).description;
            const t = sentAt.get(seq);
            if (t !== undefined) seen.push(performance.now() - t);
            counts.set(seq, (counts.get(seq) ?? 0) + 1);
          }
          return false;
        }, 3_600_000)
        .catch(() => undefined);
    });
    const total = RATE * SECONDS;
    const intervalMs = (1000 * BATCH) / RATE;
    const acks: number[] = [];
    note(`${CLIENTS} SSE clients; posting ${total} events at ${RATE}/s in batches of ${BATCH}`);
    const t0 = performance.now();
    const posts: Promise<void>[] = [];
    for (let b = 0; b < total / BATCH; b++) {
      const due = t0 + b * intervalMs;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const events = Array.from({ length: BATCH }, (_, k) => {
        const seq = `e${b * BATCH + k}`;
        return {
          type: 'code_executed',
          server: 'bench',
          description: seq,
          user: 'dev-user@dev-tenant',
          stdout: 'ok\n',
        };
      });
      const start = performance.now();
      for (const e of events) sentAt.set(e.description, start);
      posts.push(
        app.post({ events }).then(async (res) => {
          if (!res.ok) throw new Error(`POST /events: ${res.status} ${await res.text()}`);
          acks.push(performance.now() - start);
        }),
      );
    }
    await Promise.all(posts);
    const elapsedS = (performance.now() - t0) / 1000;
    const deadline = Date.now() + 10_000;
    while (seen.length < total * CLIENTS && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    if (seen.length < total * CLIENTS) throw new Error(`clients saw ${seen.length} of ${total * CLIENTS} deliveries`);
    emit({
      bench: BENCH,
      subject: 'ingest',
      metric: 'events_per_s',
      value: Math.round(total / elapsedS),
      clients: CLIENTS,
    });
    const ack = summarize(acks);
    emitFigures(BENCH, 'post_ack', ack);
    const s = summarize(seen);
    emitFigures(BENCH, 'post_to_seen', s, { name: 'post_ack', summary: ack });
    emit({
      bench: BENCH,
      subject: 'post_to_seen',
      metric: 'p99_goal_ms',
      value: 250,
      met: percentile(seen, 99) <= 250,
    });
  } finally {
    readers.forEach((r) => r.close());
    await app.stop();
  }
}

runBench(BENCH, main);
