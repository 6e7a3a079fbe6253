import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ActivityPublisher, activityPublisherConfigSchema } from '@stoa/activity';

interface Receiver {
  url: string;
  batches: { auth?: string; events: Record<string, unknown>[] }[];
  /** Resolves once `n` events arrived. */
  received: (n: number) => Promise<void>;
  close: () => Promise<void>;
}

/** A real HTTP receiver standing in for the activity app's POST /events. */
async function receiver(port = 0): Promise<Receiver> {
  const batches: Receiver['batches'] = [];
  const waiters: (() => void)[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      batches.push({ auth: req.headers.authorization, events: (JSON.parse(body) as { events: [] }).events });
      res.end('{"status":"ok"}');
      waiters.splice(0).forEach((w) => w());
    });
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  const bound = (server.address() as { port: number }).port;
  const count = () => batches.reduce((n, b) => n + b.events.length, 0);
  return {
    url: `http://127.0.0.1:${bound}`,
    batches,
    received: (n) =>
      new Promise<void>((resolve) => {
        const check = () => (count() >= n ? resolve() : waiters.push(check));
        check();
      }),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const config = (over: Record<string, unknown>) => activityPublisherConfigSchema.parse(over);
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((c) => c()));
});

describe('ActivityPublisher', () => {
  it('is off without a URL: publishing does nothing and counts nothing', () => {
    const p = new ActivityPublisher(config({ url: '' }), 'demo');
    p.publish({ type: 'code_executed' });
    expect(p.enabled).toBe(false);
    expect(p.stats()).toEqual({ published: 0, sent: 0, dropped: 0, queued: 0 });
  });

  it('sends events in order, in batches, with the server name, a timestamp and the shared secret', async () => {
    const r = await receiver();
    cleanups.push(r.close);
    const p = new ActivityPublisher(
      config({ url: `${r.url}/`, secret: 'a-secret-of-16-chars', batch_size: 10 }),
      'demo',
    );
    for (let i = 0; i < 25; i++) p.publish({ type: 'tool_search', description: `q${i}` });
    await r.received(25);
    const all = r.batches.flatMap((b) => b.events);
    expect(all.map((e) => e.description)).toEqual(Array.from({ length: 25 }, (_, i) => `q${i}`));
    expect(r.batches.every((b) => b.events.length <= 10)).toBe(true);
    expect(r.batches[0]!.auth).toBe('Bearer a-secret-of-16-chars');
    expect(all[0]).toMatchObject({ server: 'demo', type: 'tool_search' });
    expect(typeof all[0]!.timestamp).toBe('number');
    await p.flush();
    expect(p.stats()).toMatchObject({ published: 25, sent: 25, dropped: 0 });
  });

  it('drops the oldest events and counts them while the receiver hangs, and never waits in publish', async () => {
    const sockets = new Set<Socket>();
    const hang = createTcpServer((s) => sockets.add(s)); // accepts, never answers
    await new Promise<void>((r) => hang.listen(0, '127.0.0.1', r));
    cleanups.push(
      () =>
        new Promise<void>((r) => {
          sockets.forEach((s) => s.destroy());
          hang.close(() => r());
        }),
    );
    const port = (hang.address() as { port: number }).port;
    const p = new ActivityPublisher(
      config({ url: `http://127.0.0.1:${port}`, queue_size: 100, batch_size: 10, timeout_ms: 300 }),
      'demo',
    );
    const started = performance.now();
    for (let i = 0; i < 10_000; i++) p.publish({ type: 'code_executed', stdout: 'x'.repeat(100) });
    const elapsed = performance.now() - started;
    // 10,000 publishes while nothing is answering: a few ms of array pushes, no I/O in the caller.
    expect(elapsed).toBeLessThan(500);
    const s = p.stats();
    expect(s.queued).toBeLessThanOrEqual(100);
    expect(s.dropped).toBeGreaterThanOrEqual(10_000 - 100 - 10);
    await p.onApplicationShutdown();
    expect(p.stats()).toMatchObject({ published: 10_000, sent: 0, dropped: 10_000, queued: 0 });
  });

  it('counts a refused connection as dropped, does not wait out the back-off in flush, and resumes', async () => {
    const r = await receiver();
    const { url } = r;
    await r.close(); // nothing listens on that port now
    const p = new ActivityPublisher(config({ url, retry_delay_ms: 50, retry_max_delay_ms: 50 }), 'demo');
    cleanups.push(() => p.onApplicationShutdown());
    p.publish({ type: 'skill_loaded', skill_name: 'lost' });
    await p.flush();
    expect(p.stats()).toMatchObject({ published: 1, sent: 0, dropped: 1 });
    const back = await receiver(Number(new URL(url).port));
    cleanups.push(back.close);
    p.publish({ type: 'skill_loaded', skill_name: 'kept' });
    await back.received(1);
    expect(back.batches[0]!.events[0]).toMatchObject({ skill_name: 'kept' });
  });

  it('backs off after failures, doubling up to the cap, and starts again from the short delay once it works', async () => {
    const attempts: number[] = [];
    let answer = false;
    const delivered: string[] = [];
    const waiters = new Set<() => void>();
    const when = (pred: () => boolean) =>
      new Promise<void>((resolve) => {
        const w = () => pred() && (waiters.delete(w), resolve());
        waiters.add(w);
        w();
      });
    const server = createServer((req, res) => {
      attempts.push(performance.now());
      waiters.forEach((w) => w());
      if (!answer) return void req.socket.destroy(); // a broken activity app: the POST fails
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        for (const e of (JSON.parse(body) as { events: { description: string }[] }).events)
          delivered.push(e.description);
        res.end('{}');
        waiters.forEach((w) => w());
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const p = new ActivityPublisher(config({ url, retry_delay_ms: 100, retry_max_delay_ms: 200 }), 'demo');
    cleanups.push(() => p.onApplicationShutdown());
    // A steady trickle of events (a busy executor) while the app keeps failing: six attempts, not one per event.
    let n = 0;
    const trickle = setInterval(() => p.publish({ type: 'tool_search', description: `q${n++}` }), 5);
    await when(() => attempts.length >= 6);
    clearInterval(trickle);
    const gaps = attempts.slice(1).map((t, i) => t - attempts[i]!);
    expect(gaps[0]).toBeGreaterThanOrEqual(95); // the first wait: retry_delay_ms
    expect(gaps[1]).toBeGreaterThanOrEqual(190); // doubled
    // Capped at 200 ms (uncapped, the fourth and fifth waits would be 800 and 1600 ms).
    expect(Math.max(...gaps.slice(2))).toBeLessThan(750);
    expect(p.stats().sent).toBe(0);
    expect(p.stats().dropped).toBeGreaterThan(0);
    answer = true;
    p.publish({ type: 'tool_search', description: 'after' });
    await when(() => delivered.includes('after'));
    await p.flush(); // the POST's answer is read after the receiver recorded its events
    expect(p.stats().sent).toBeGreaterThan(0);
  });

  it('caps the displays of one event and clips long text, keeping head and tail', async () => {
    const r = await receiver();
    cleanups.push(r.close);
    const p = new ActivityPublisher(config({ url: r.url, max_display_bytes: 1000, max_text_chars: 100 }), 'demo');
    const png = (n: number) => ({ mime_type: 'image/png' as const, data: 'A'.repeat(n), metadata: {} });
    p.publish({ type: 'code_executed', stdout: `HEAD${'-'.repeat(1000)}TAIL`, displays: [png(600), png(600)] });
    await r.received(1);
    const e = r.batches[0]!.events[0] as { stdout: string; displays: { data: string; metadata: object }[] };
    expect(e.stdout.startsWith('HEAD')).toBe(true);
    expect(e.stdout.endsWith('TAIL')).toBe(true);
    expect(e.stdout).toContain('characters omitted');
    expect(e.displays[0]!.data).toHaveLength(600);
    expect(e.displays[1]).toEqual({ mime_type: 'image/png', data: '', metadata: { omitted: true, size_bytes: 600 } });
  });
});
