/**
 * Bounded capture of one output stream of one execution: the first `headChars` and last `tailChars`
 * characters plus the total length, so 1 GB of output costs the server a few MB at most.
 */
export class OutputCapture {
  private headText = '';
  private tailText = '';
  private total = 0;

  constructor(
    private readonly headChars: number,
    private readonly tailChars: number,
    private readonly onData?: (text: string) => void,
  ) {}

  append(text: string): void {
    if (!text) return;
    this.total += text.length;
    this.onData?.(text);
    const room = this.headChars - this.headText.length;
    if (room > 0) {
      this.headText += text.slice(0, room);
      text = text.slice(room);
      if (!text) return;
    }
    this.tailText = (this.tailText + text).slice(-this.tailChars);
  }

  /** Total characters seen, kept or not. */
  get length(): number {
    return this.total;
  }

  /** True when every character seen is still held. */
  get complete(): boolean {
    return this.total === this.headText.length + this.tailText.length;
  }

  /** The whole text when complete, else head + tail (callers check `complete`). */
  text(): string {
    return this.headText + this.tailText;
  }

  head(n: number): string {
    return (this.headText + (this.complete ? this.tailText : '')).slice(0, n);
  }

  tail(n: number): string {
    return (this.complete ? this.headText + this.tailText : this.tailText).slice(-n);
  }
}
