/**
 * Group commit: items submitted while a write is in flight are written together by the next one. The first item
 * is written at once (no timer, no added latency when idle); under load each write takes everything that queued
 * behind the previous one, up to `maxBatch`, so one transaction (and one fsync) serves many callers.
 *
 * A failed batch of several items is retried one item at a time, so one bad item fails only its own caller.
 */
export class GroupCommit<T, R> {
  private queue: { item: T; resolve: (r: R) => void; reject: (e: unknown) => void }[] = [];
  private running?: Promise<void>;

  constructor(
    /** Writes `items` in one go; returns one result per item, in order. */
    private readonly write: (items: T[]) => Promise<R[]>,
    private readonly maxBatch = 100,
  ) {}

  /** Items waiting or being written. */
  get size(): number {
    return this.queue.length;
  }

  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.running ??= this.drain();
    });
  }

  /** Resolves once everything submitted so far is written (or failed). */
  async flush(): Promise<void> {
    while (this.running) await this.running;
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length) {
        const batch = this.queue.splice(0, this.maxBatch);
        try {
          const results = await this.write(batch.map((b) => b.item));
          batch.forEach((b, i) => b.resolve(results[i] as R));
        } catch (err) {
          if (batch.length === 1) batch[0]!.reject(err);
          else
            for (const b of batch)
              await this.write([b.item]).then(
                ([r]) => b.resolve(r as R),
                (e: unknown) => b.reject(e),
              );
        }
      }
    } finally {
      this.running = undefined;
    }
  }
}
