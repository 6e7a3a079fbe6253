import type { Socket } from 'node:net';
import type { KernelDirs, KernelProcess, LoadResult, Serializer } from '@stoa/kernel';
import { KernelSocket } from '../files/kernel-socket';
import { TransferTooLargeError } from './receive.errors';

/** A body read up to its first chunk: what arrived, and the rest as it comes. */
export interface PeekedBody {
  first: Buffer | undefined;
  rest: AsyncIterator<Buffer>;
}

export async function peekBody(body: AsyncIterable<Buffer>): Promise<PeekedBody> {
  const rest = body[Symbol.asyncIterator]();
  const next = await rest.next();
  return { first: next.done ? undefined : next.value, rest };
}

export async function* replayBody(b: PeekedBody): AsyncGenerator<Buffer> {
  if (b.first) yield b.first;
  for (let next = await b.rest.next(); !next.done; next = await b.rest.next()) yield next.value;
}

/**
 * Loads a received object into `kernel` as its body arrives, through a {@link KernelSocket}: no file is written
 * and read back. Past `maxBytes` the stream is cut (the kernel binds nothing) and TransferTooLargeError is thrown;
 * a body that breaks off throws its error. Undefined: no socket could be made here, so the caller uses a file.
 */
export async function loadStreamed(
  kernel: KernelProcess,
  dirs: KernelDirs,
  target: { name: string; serializer: Serializer; timeoutMs: number; maxBytes: number },
  body: PeekedBody,
): Promise<{ load: LoadResult; size: number } | undefined> {
  const socket = await KernelSocket.open(dirs, 'in');
  if (!socket) return undefined;
  let size = 0;
  let failure: Error | undefined;
  const feed = async (s: Socket) => {
    try {
      for await (const chunk of replayBody(body)) {
        size += chunk.length;
        if (size > target.maxBytes) throw new TransferTooLargeError('Payload exceeds maximum transfer size');
        if (!s.write(chunk)) await waitDrain(s);
      }
      s.end(); // the kernel reads to the end: exactly one object, nothing after it
    } catch (err) {
      failure = err as Error;
      s.destroy(); // the kernel sees a cut stream and binds nothing
    }
  };
  let fed: Promise<void> | undefined;
  void socket.connection.then((s) => (fed = feed(s)));
  try {
    const load = await kernel.load(target.name, socket.path, target.serializer, target.timeoutMs);
    await fed;
    if (failure instanceof TransferTooLargeError || (failure && load.ok)) throw failure;
    return { load, size };
  } finally {
    await socket.close();
  }
}

function waitDrain(s: Socket): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = (err?: Error) => {
      s.off('drain', ok);
      s.off('close', closed);
      s.off('error', done);
      if (err) reject(err);
      else resolve();
    };
    const ok = () => done();
    const closed = () => done(new Error('The kernel closed the object stream before reading all of it.'));
    s.once('drain', ok);
    s.once('close', closed);
    s.once('error', done);
  });
}
