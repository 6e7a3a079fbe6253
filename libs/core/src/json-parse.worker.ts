/**
 * The JSON parser thread of `parseJsonBody`: parses each body it is sent with the nesting bound and sends the
 * value back with the bytes (both transferred, never copied).
 */
import { parentPort } from 'node:worker_threads';
import { parseJsonText } from './untrusted';

/** What the parser thread is sent. */
export interface ParseRequest {
  id: number;
  raw: ArrayBuffer;
  maxDepth: number;
}

/** What it answers: the value and the bytes back, or why the body was refused. */
export type ParseReply =
  | { id: number; value: unknown; raw: ArrayBuffer }
  | { id: number; error: string; type?: 'entity.parse.failed' | 'entity.too.deep' };

parentPort?.on('message', ({ id, raw, maxDepth }: ParseRequest) => {
  try {
    const value = parseJsonText(Buffer.from(raw), maxDepth);
    parentPort!.postMessage({ id, value, raw } satisfies ParseReply, [raw]);
  } catch (err) {
    const e = err as Error & { type?: 'entity.parse.failed' | 'entity.too.deep' };
    parentPort!.postMessage({ id, error: e.message, type: e.type } satisfies ParseReply);
  }
});
