import { createReadStream, createWriteStream, mkdtempSync, rmSync, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';

/** Bytes held in memory before a body spills to a private temporary file. */
const IN_MEMORY_BYTES = 4 * 1024 * 1024;

/**
 * The part of a request body read before it could be routed: in memory while small, then in a 0700 temporary
 * directory. `replay(rest)` yields what was held, then the rest of the request as it arrives; `dispose` removes the
 * file (call it once the body has been relayed or refused).
 */
export class HeldBody {
  private readonly chunks: Buffer[] = [];
  private held = 0;
  private dir?: string;
  private file?: WriteStream;

  get bytes(): number {
    return this.held;
  }

  /** Holds a chunk; false when the file wants the reader to wait for `drain` (backpressure). */
  push(chunk: Buffer): boolean {
    this.held += chunk.length;
    if (!this.file && this.held <= IN_MEMORY_BYTES) {
      this.chunks.push(chunk);
      return true;
    }
    if (!this.file) {
      this.dir = mkdtempSync(join(tmpdir(), 'stoa-dispatch-'));
      this.file = createWriteStream(join(this.dir, 'body'), { mode: 0o600 });
      for (const c of this.chunks.splice(0)) this.file.write(c);
    }
    return this.file.write(chunk);
  }

  /** Waits until a spilled file can take more. */
  async drained(): Promise<void> {
    if (this.file?.writableNeedDrain) await once(this.file, 'drain');
  }

  async *replay(rest: Readable): AsyncGenerator<Buffer> {
    if (this.file) {
      this.file.end();
      await once(this.file, 'close');
      yield* createReadStream(join(this.dir!, 'body')) as AsyncIterable<Buffer>;
    } else yield* this.chunks;
    yield* rest as AsyncIterable<Buffer>;
  }

  dispose(): void {
    this.file?.destroy();
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
  }
}
