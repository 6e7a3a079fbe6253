import type { Socket } from 'node:net';
import type { DumpResult, KernelDirs, KernelProcess } from '@stoa/kernel';
import { KernelSocket } from '../files/kernel-socket';

/** What a streamed dump came to: the kernel's result, and the consumer's when the kernel produced any bytes. */
export interface StreamedDump<T> {
  dump: DumpResult;
  /** Set when the dump succeeded and the consumer finished. */
  result?: T;
}

const MAX_PREAMBLE = 64;

/**
 * Serialises kernel variable `name` straight into `consume` through a {@link KernelSocket}: no file is written and
 * read back. The kernel connects on its first byte and names its serializer on the first line; the body handed to
 * `consume` ends only once the kernel reported success, and throws otherwise (so a half-serialised object is never
 * delivered). Nothing is consumed when the variable is missing or fails before its first byte.
 *
 * Errors: the consumer's (a refused or broken upload, which also stops the kernel) is thrown; the kernel's is in
 * `dump`. Undefined: no socket could be made here (too long a path), so the caller uses a file.
 */
export async function streamVariable<T>(
  kernel: KernelProcess,
  dirs: KernelDirs,
  name: string,
  opts: { timeoutMs: number; maxBytes: number },
  consume: (serializer: string, body: AsyncIterable<Buffer>) => Promise<T>,
): Promise<StreamedDump<T> | undefined> {
  const socket = await KernelSocket.open(dirs, 'out');
  if (!socket) return undefined;
  let dumped: DumpResult | undefined;
  let settle!: (r: DumpResult) => void;
  const finished = new Promise<DumpResult>((resolve) => (settle = resolve));
  let started = false;
  /** Set when the upload failed while the kernel was still serialising (the kernel then fails on a closed socket). */
  let uploadFailed: { err: unknown } | undefined;
  const body = async function* (first: Buffer, rest: AsyncIterator<Buffer>): AsyncGenerator<Buffer> {
    if (first.length) yield first;
    for (let next = await rest.next(); !next.done; next = await rest.next()) yield next.value;
    const r = await finished;
    if (!r.found || r.error !== undefined)
      throw new Error('The kernel could not finish serialising the object; the transfer is aborted.');
  };
  const consumed = socket.connection.then(async (s) => {
    if (dumped && (!dumped.found || dumped.error !== undefined)) return undefined; // failed before we accepted
    const { serializer, first, rest } = await preamble(s);
    started = true;
    return { value: await consume(serializer, body(first, rest)) };
  });
  consumed.catch((err: unknown) => {
    if (!dumped && started) uploadFailed = { err };
    void socket.close(); // a failed upload must not leave the kernel blocked on a socket nobody reads
  });
  try {
    dumped = await kernel.dump(name, socket.path, opts.timeoutMs, opts.maxBytes);
    settle(dumped);
    if (dumped.found && dumped.error === undefined) return { dump: dumped, result: (await consumed)?.value };
    // Whichever failed first says why: the upload (the kernel then could not write), else the kernel.
    if (uploadFailed) throw uploadFailed.err;
    return { dump: dumped };
  } finally {
    await socket.close();
  }
}

/** Reads the kernel's first line (its serializer) and hands back what followed it. */
async function preamble(s: Socket): Promise<{ serializer: string; first: Buffer; rest: AsyncIterator<Buffer> }> {
  const rest = (s as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  let head: Buffer = Buffer.alloc(0);
  for (;;) {
    const next = await rest.next();
    if (next.done) throw new Error('The kernel closed the object stream before naming its serializer.');
    head = head.length ? Buffer.concat([head, next.value]) : next.value;
    const nl = head.indexOf(10);
    if (nl >= 0 && nl <= MAX_PREAMBLE)
      return { serializer: head.subarray(0, nl).toString('latin1'), first: head.subarray(nl + 1), rest };
    if (head.length > MAX_PREAMBLE)
      throw new Error('The kernel began the object stream without naming its serializer.');
  }
}
