import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createParser } from 'eventsource-parser';
import { stringify } from 'yaml';
import { TEST_ADMIN_TOKEN } from './admin';
import { ACTIVITY_MAIN } from './paths';
import { freePort } from './ports';

/** The writer secret test activity apps and publishers share. */
export const TEST_WRITER_SECRET = 'test-writer-secret-0123456789';

export interface RunningActivity {
  url: string;
  port: number;
  proc: ChildProcess;
  logs: () => string;
  stop: () => Promise<number | null>;
  /** POST /events with the test writer secret (or `auth`). */
  post: (events: unknown, auth?: string | null) => Promise<Response>;
  /** A stream cookie for `token` (an unsigned dev JWT, or none: the dev user); `admin` uses the admin endpoint. */
  cookie: (token?: string, admin?: boolean) => Promise<string>;
}

/** Starts `node dist/apps/activity/main.js` on a free port (SQLite in a temp dir unless the config says otherwise). */
export async function startActivity(
  config: Record<string, unknown> = {},
  env: Record<string, string> = {},
): Promise<RunningActivity> {
  const dir = mkdtempSync(join(tmpdir(), 'stoa-activity-'));
  const port = await freePort();
  const file = join(dir, 'activity.yaml');
  writeFileSync(file, stringify({ data_dir: join(dir, 'data'), ...config }));
  const proc = spawn(process.execPath, [ACTIVITY_MAIN, '--config', file, '--port', String(port)], {
    env: {
      ...process.env,
      LOG_LEVEL: 'warn',
      STOA_ADMIN_TOKEN: TEST_ADMIN_TOKEN,
      ACTIVITY_UI_SECRET: TEST_WRITER_SECRET,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let logs = '';
  proc.stdout?.on('data', (d: Buffer) => (logs += d.toString()));
  proc.stderr?.on('data', (d: Buffer) => (logs += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`activity app exited with ${proc.exitCode}:\n${logs}`);
    if (
      await fetch(`${url}/health`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    if (Date.now() > deadline) throw new Error(`activity app did not become healthy:\n${logs}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url,
    port,
    proc,
    logs: () => logs,
    stop: async () => {
      if (proc.exitCode === null) proc.kill('SIGTERM');
      return exited;
    },
    post: (events, auth = `Bearer ${TEST_WRITER_SECRET}`) =>
      fetch(`${url}/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(auth ? { authorization: auth } : {}) },
        body: JSON.stringify(events),
      }),
    cookie: async (token, admin = false) => {
      const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
      if (admin) headers['x-stoa-admin-token'] = TEST_ADMIN_TOKEN;
      const res = await fetch(`${url}/${admin ? 'admin/v1/' : ''}stream-token`, { method: 'POST', headers });
      if (!res.ok) throw new Error(`stream-token: ${res.status} ${await res.text()}`);
      return (res.headers.get('set-cookie') ?? '').split(';')[0] as string;
    },
  };
}

export interface StreamEvent {
  event: string;
  id?: string;
  data: string;
}

/** A browser-like SSE reader: every event in arrival order, waits on a condition, closes on demand. */
export interface SseReader {
  events: StreamEvent[];
  /** `activity` events parsed. */
  activity: () => (Record<string, unknown> & { id: string })[];
  waitFor: (pred: (events: StreamEvent[]) => boolean, ms?: number) => Promise<void>;
  /** Resolves when the server ended the stream. */
  ended: Promise<void>;
  close: () => void;
}

export async function openStream(url: string, headers: Record<string, string>): Promise<SseReader> {
  const ac = new AbortController();
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: ac.signal });
  if (!res.ok || !res.body) throw new Error(`stream: ${res.status} ${await res.text()}`);
  const events: StreamEvent[] = [];
  const waiters = new Set<() => void>();
  const parser = createParser({
    onEvent: (e) => {
      events.push({ event: e.event ?? 'message', id: e.id, data: e.data });
      for (const w of waiters) w();
    },
  });
  const decoder = new TextDecoder();
  const ended = (async () => {
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>)
        parser.feed(decoder.decode(chunk, { stream: true }));
    } catch {
      /* aborted */
    }
    for (const w of waiters) w();
  })();
  let done = false;
  void ended.then(() => (done = true));
  return {
    events,
    activity: () =>
      events
        .filter((e) => e.event === 'activity')
        .map((e) => JSON.parse(e.data) as Record<string, unknown> & { id: string }),
    waitFor: (pred, ms = 10_000) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (pred(events)) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve();
          } else if (done) {
            waiters.delete(check);
            clearTimeout(timer);
            reject(new Error(`stream ended first; saw ${events.map((e) => e.event).join(', ')}`));
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`timed out; saw ${events.map((e) => e.event).join(', ')}`));
        }, ms);
        waiters.add(check);
        check();
      }),
    ended,
    close: () => ac.abort(),
  };
}

/** Python that shows a 120×60 gradient PNG through the kernel's display() (stdlib only, no matplotlib needed). */
export const PNG_DISPLAY_CODE = `import struct, zlib
def _chunk(t, d):
    return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d) & 0xffffffff)
_w, _h = 120, 60
_raw = b''.join(b'\\x00' + bytes(v for x in range(_w) for v in (x * 2, 90, 255 - x * 2)) for y in range(_h))
_png = (b'\\x89PNG\\r\\n\\x1a\\n' + _chunk(b'IHDR', struct.pack('>IIBBBBB', _w, _h, 8, 2, 0, 0, 0))
        + _chunk(b'IDAT', zlib.compress(_raw)) + _chunk(b'IEND', b''))
class Figure:
    def _repr_png_(self):
        return _png
display(Figure())
`;
