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

/**
 * Splits a raw stream at end-of-execution markers (`\0STOA:<nonce>\0\n`) written by the driver,
 * routing text to the active capture. Markers may straddle chunk boundaries.
 */
export class MarkerSplitter {
  private pending = '';
  private nonce: string | undefined;
  private capture: OutputCapture | undefined;
  private onMarker: (() => void) | undefined;

  /** Starts routing text to `capture` until the marker for `nonce` arrives. */
  begin(nonce: string, capture: OutputCapture, onMarker: () => void): void {
    this.nonce = nonce;
    this.capture = capture;
    this.onMarker = onMarker;
    const buffered = this.pending;
    this.pending = '';
    this.push(buffered);
  }

  /** Stops routing (execution abandoned); later text is dropped. */
  end(): void {
    if (this.pending && this.capture) this.capture.append(this.pending);
    this.pending = '';
    this.nonce = undefined;
    this.capture = undefined;
    this.onMarker = undefined;
  }

  push(text: string): void {
    if (!this.nonce || !this.capture) {
      this.pending = ''; // output while idle belongs to no execution
      return;
    }
    const data = this.pending + text;
    const marker = `\u0000STOA:${this.nonce}\u0000\n`;
    const at = data.indexOf(marker);
    if (at >= 0) {
      this.capture.append(data.slice(0, at));
      this.pending = '';
      const done = this.onMarker;
      this.nonce = undefined;
      this.capture = undefined;
      this.onMarker = undefined;
      done?.();
      return;
    }
    // Hold back the earliest tail that could still grow into the marker.
    let keep = data.length;
    for (
      let i = data.indexOf('\u0000', Math.max(0, data.length - marker.length + 1));
      i >= 0;
      i = data.indexOf('\u0000', i + 1)
    ) {
      if (marker.startsWith(data.slice(i))) {
        keep = i;
        break;
      }
    }
    this.capture.append(data.slice(0, keep));
    this.pending = data.slice(keep);
  }
}
