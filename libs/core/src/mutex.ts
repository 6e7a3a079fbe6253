/** A FIFO async mutex: one holder at a time, waiters served in arrival order. */
export class Mutex {
  private tail: Promise<void> = Promise.resolve();
  private waiting = 0;

  /** Number of callers holding or waiting for the lock. */
  get pending(): number {
    return this.waiting;
  }

  async runExclusive<T>(fn: () => Promise<T>): Promise<T> {
    this.waiting++;
    const previous = this.tail;
    let release!: () => void;
    this.tail = new Promise<void>((resolve) => (release = resolve));
    try {
      await previous;
      return await fn();
    } finally {
      this.waiting--;
      release();
    }
  }
}
