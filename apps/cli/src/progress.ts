/** Progress of a long step on stderr: a ticking line on a terminal, a line every few seconds in logs. */
export class Progress {
  private readonly started = Date.now();
  private readonly timer: NodeJS.Timeout;
  private last = '';

  constructor(
    private readonly label: string,
    private readonly out: NodeJS.WriteStream = process.stderr,
  ) {
    this.line(`… ${label}`);
    this.timer = setInterval(() => this.tick(), out.isTTY ? 1000 : 5000);
    this.timer.unref();
  }

  /** A sub-step's message (e.g. a log line of the environment build). */
  note(message: string): void {
    this.last = message;
    this.line(`  [${this.elapsed()}] ${message}`);
  }

  /** Ends the step: ✓ with its duration, or ✗. */
  done(ok: boolean, message = ''): void {
    clearInterval(this.timer);
    this.line(`${ok ? '✓' : '✗'} ${this.label} (${this.elapsed()})${message ? `: ${message}` : ''}`);
  }

  private tick(): void {
    const text = `  … still ${this.label.toLowerCase()} (${this.elapsed()}${this.last ? `, last: ${this.last}` : ''})`;
    if (this.out.isTTY) this.out.write(`\r${text.slice(0, (this.out.columns || 100) - 1)}\u001b[K`);
    else this.line(text);
  }

  private line(text: string): void {
    this.out.write(`${this.out.isTTY ? '\r\u001b[K' : ''}${text}\n`);
  }

  private elapsed(): string {
    return `${((Date.now() - this.started) / 1000).toFixed(1)} s`;
  }
}

/** Runs `work` as one step with progress output. */
export async function withProgress<T>(label: string, work: (p: Progress) => Promise<T>): Promise<T> {
  const progress = new Progress(label);
  try {
    const result = await work(progress);
    progress.done(true);
    return result;
  } catch (err) {
    progress.done(false, (err as Error).message.split('\n')[0]);
    throw err;
  }
}
