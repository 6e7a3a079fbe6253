import { Worker } from 'node:worker_threads';
import type { ParseReply, ParseRequest } from './json-parse.worker';
import { siblingModule } from './sibling-module';
import { parseJsonText } from './untrusted';

/** Bodies at least this large are parsed on a worker thread, so the event loop keeps serving others. */
export const OFF_LOOP_BYTES = 256 * 1024;

/** A body refused by `parseJsonBody` (400): unreadable JSON or nesting over the limit. */
export class JsonBodyError extends Error {
  readonly status = 400;
  constructor(
    message: string,
    readonly type: 'entity.parse.failed' | 'entity.too.deep',
  ) {
    super(message);
  }
}

/** A parsed body and its raw bytes (`buf` itself, or the same bytes back from the parser thread: use these). */
export interface ParsedBody {
  value: unknown;
  bytes: Buffer;
}

/**
 * Parses a JSON request body (object or array at the top, as a JSON-RPC message is) with a nesting bound.
 * Small bodies parse inline; large ones (a 10 MB code cell or a 10 MB tool name) on one shared worker thread —
 * decoding and parsing 10 MB takes a few hundred ms on a busy machine, which would stall every other request.
 */
export async function parseJsonBody(buf: Buffer, maxDepth: number): Promise<ParsedBody> {
  if (buf.length >= OFF_LOOP_BYTES) return offLoop().parse(buf, maxDepth);
  try {
    return { value: parseJsonText(buf, maxDepth), bytes: buf };
  } catch (err) {
    throw asBodyError(err as Error & { type?: string });
  }
}

function asBodyError(err: { message: string; type?: string }): JsonBodyError {
  return new JsonBodyError(err.message, err.type === 'entity.too.deep' ? 'entity.too.deep' : 'entity.parse.failed');
}

/** One lazily started worker thread that parses bodies in turn (unref'd: it never keeps the process alive). */
class OffLoopParser {
  private readonly worker: Worker;
  private readonly waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private seq = 0;

  constructor() {
    const { file, execArgv } = siblingModule(__filename, 'json-parse.worker');
    this.worker = new Worker(file, { execArgv });
    this.worker.unref();
    this.worker.on('message', (r: ParseReply) => {
      const w = this.waiting.get(r.id);
      this.waiting.delete(r.id);
      if ('error' in r) w?.reject(asBodyError({ message: r.error, type: r.type }));
      else w?.resolve({ value: r.value, bytes: Buffer.from(r.raw) });
    });
    this.worker.on('error', (err) => this.failAll(err));
    this.worker.on('exit', () => {
      this.failAll(new Error('the JSON parser thread exited'));
      if (parser === this) parser = undefined;
    });
  }

  parse(buf: Buffer, maxDepth: number): Promise<ParsedBody> {
    const id = ++this.seq;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
      // A body that owns its whole ArrayBuffer (any large one: Buffer.concat allocates it) travels to the thread
      // and back without a copy; the caller gets the same bytes back as `bytes` (connectors forward them).
      const owned = buf.byteOffset === 0 && buf.byteLength === buf.buffer.byteLength;
      const raw = (owned ? buf.buffer : new Uint8Array(buf).buffer) as ArrayBuffer;
      this.worker.postMessage({ id, raw, maxDepth } satisfies ParseRequest, [raw]);
    });
  }

  private failAll(err: Error): void {
    for (const w of this.waiting.values()) w.reject(err);
    this.waiting.clear();
  }
}

let parser: OffLoopParser | undefined;
function offLoop(): OffLoopParser {
  parser ??= new OffLoopParser();
  return parser;
}
