import type { Socket } from 'node:net';
import type { KernelDirs, KernelProcess, LoadResult, Serializer } from '@stoa/kernel';
import { KernelSocket } from '../files/kernel-socket';
import { capBody } from './binary-body';

/** A body read up to its first chunk: what arrived (until handed out), and the rest as it comes. */
export interface PeekedBody {
  first: Buffer | undefined;
  rest: AsyncIterator<Buffer>;
}

export async function peekBody(body: AsyncIterable<Buffer>): Promise<PeekedBody> {
  const rest = body[Symbol.asyncIterator]();
  const next = await rest.next();
  return { first: next.done ? undefined : next.value, rest };
}

/** The body from its first chunk on (each chunk is handed out once, however often this is called). */
export async function* replayBody(b: PeekedBody): AsyncGenerator<Buffer> {
  const first = b.first;
  b.first = undefined;
  if (first) yield first;
  for (let next = await b.rest.next(); !next.done; next = await b.rest.next()) yield next.value;
}

/**
 * Loads a received object into `kernel` as its body arrives, through a {@link KernelSocket}: no file is written
 * and read back. `body` settles once the whole request body was read — with its size, or with
 * TransferTooLargeError past `maxBytes` (the kernel's stream is cut there, so it binds nothing) or the body's own
 * error. A kernel that stops reading early (a failed load) leaves the rest to be read and discarded, so the
 * sender gets the answer rather than a reset; await `body` outside the session's lock. Undefined: no socket could
 * be made here, so the caller uses a file.
 */
export async function loadStreamed(
  kernel: KernelProcess,
  dirs: KernelDirs,
  target: { name: string; serializer: Serializer; timeoutMs: number; maxBytes: number },
  received: PeekedBody,
): Promise<{ load: LoadResult; body: Promise<number> } | undefined> {
  const socket = await KernelSocket.open(dirs, 'in');
  if (!socket) return undefined;
  let feeding: Promise<number> | undefined;
  let loaded = false;
  void socket.connection.then((s) => {
    if (loaded)
      s.destroy(); // too late: the load is over, and the body is discarded below
    else {
      feeding = feed(s, received, target.maxBytes);
      feeding.catch(() => undefined); // reported when the caller awaits `body`
    }
  });
  let load: LoadResult;
  try {
    load = await kernel.load(target.name, socket.path, target.serializer, target.timeoutMs);
  } catch (err) {
    load = { ok: false, error: (err as Error).message };
  } finally {
    loaded = true;
    await socket.close(); // the feed then reads the rest of the body and discards it
  }
  const body = feeding ?? discard(received, target.maxBytes);
  body.catch(() => undefined); // reported when the caller awaits it
  return { load, body };
}

/** Writes the body into the kernel's socket (with backpressure); once that closes, reads on and discards. */
async function feed(s: Socket, received: PeekedBody, maxBytes: number): Promise<number> {
  let size = 0;
  let open = true;
  s.once('close', () => (open = false));
  s.on('error', () => (open = false));
  try {
    for await (const chunk of capBody(replayBody(received), maxBytes)) {
      size += chunk.length;
      if (open && !s.write(chunk)) open = await drained(s);
    }
    if (open) s.end(); // the kernel reads to the end: exactly one object, nothing after it
    return size;
  } catch (err) {
    s.destroy(); // a cut stream: the kernel binds nothing
    throw err;
  }
}

/** Reads what is left of a body and drops it (up to `maxBytes` in all); resolves with the body's size. */
export async function discard(received: PeekedBody, maxBytes: number): Promise<number> {
  let size = 0;
  for await (const chunk of capBody(replayBody(received), maxBytes)) size += chunk.length;
  return size;
}

/** True once `s` drained; false when it closed or failed first (or already had). */
function drained(s: Socket): Promise<boolean> {
  if (s.destroyed || s.writableEnded) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      s.off('drain', onDrain);
      s.off('close', onClose);
      resolve(ok);
    };
    const onDrain = () => done(true);
    const onClose = () => done(false);
    s.once('drain', onDrain);
    s.once('close', onClose);
  });
}
