import { createWriteStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';

/** Why a body was refused while it streamed in (the receive endpoint's 400/413 answers). */
export class BodyError extends Error {
  constructor(
    readonly status: 400 | 413,
    message: string,
  ) {
    super(message);
  }
}

export interface ParsedTransferBody {
  /** Every top-level field except `data`. */
  fields: Record<string, unknown>;
  /** `data` was present and a JSON string. */
  dataIsString: boolean;
  /** Base64 characters in `data`. */
  dataChars: number;
  /** Decoded bytes written to the file. */
  decodedBytes: number;
  /** Why `data` is not valid base64 (reported after the field checks, in the reference's order). */
  base64Error?: string;
}

const WS = new Set([0x20, 0x0a, 0x0d, 0x09]);
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const NOT_B64 = /[^A-Za-z0-9+/=]/;
const MAX_FIELDS_BYTES = 1024 * 1024;

type State = 'start' | 'key' | 'colon' | 'value' | 'comma' | 'done';

/**
 * A push parser for `{variable_name, data, metadata, session_id?}` that never holds the body: the base64 `data`
 * string is validated and decoded as it arrives and written to a file; the other (small) fields are captured and
 * parsed as JSON. Any key order works (the reference sends `data` second, we send it last).
 */
export class TransferBodyParser {
  private state: State = 'start';
  private keys = 0;
  private key = '';
  private raw: Buffer[] = [];
  private rawBytes = 0;
  /** Scanner of a non-data value or a key: nesting depth, inside a string, after a backslash. */
  private depth = 0;
  private inString = false;
  private escaped = false;
  private capturing: 'key' | 'value' | undefined;
  private inData = false;
  private dataEscape = false;
  private carry = '';
  private padded = false;
  private out?: WriteStream;
  private readonly result: ParsedTransferBody = { fields: {}, dataIsString: false, dataChars: 0, decodedBytes: 0 };

  constructor(
    private readonly dataFile: string,
    private readonly maxDecoded: number,
  ) {}

  /** Feeds a chunk; resolves when its decoded bytes are written (backpressure). */
  async write(chunk: Buffer): Promise<void> {
    let i = 0;
    while (i < chunk.length) {
      if (this.inData) {
        i = await this.dataBytes(chunk, i);
        continue;
      }
      if (this.capturing) {
        i = this.scan(chunk, i);
        continue;
      }
      const c = chunk[i]!;
      if (WS.has(c)) {
        i++;
        continue;
      }
      switch (this.state) {
        case 'start':
          if (c !== 0x7b) throw invalid();
          this.state = 'key';
          i++;
          break;
        case 'key':
          if (c === 0x7d && this.keys === 0) {
            this.state = 'done';
            i++;
            break;
          }
          if (c !== QUOTE) throw invalid();
          this.begin('key');
          break;
        case 'colon':
          if (c !== 0x3a) throw invalid();
          this.state = 'value';
          i++;
          break;
        case 'value':
          if (this.key === 'data' && c === QUOTE) {
            if (this.out) throw invalid(); // a second "data"
            this.inData = true;
            this.result.dataIsString = true;
            this.out = createWriteStream(this.dataFile, { mode: 0o600 });
            i++;
          } else this.begin('value');
          break;
        case 'comma':
          if (c === 0x2c) this.state = 'key';
          else if (c === 0x7d) this.state = 'done';
          else throw invalid();
          i++;
          break;
        case 'done':
          throw invalid();
      }
    }
  }

  /** Ends the body: the parsed fields, after the data file is complete. */
  async end(): Promise<ParsedTransferBody> {
    if (this.state !== 'done' || this.inData || this.capturing) throw invalid();
    if (this.out) {
      if (this.carry && !this.result.base64Error) await this.decode(this.carry, true);
      this.out.end();
      await once(this.out, 'close');
    }
    return this.result;
  }

  /** Closes the data file after a refusal. */
  async abort(): Promise<void> {
    if (this.out && !this.out.closed) {
      this.out.destroy();
      await once(this.out, 'close').catch(() => undefined);
    }
  }

  private begin(what: 'key' | 'value'): void {
    this.capturing = what;
    this.raw = [];
    this.depth = 0;
    this.inString = false;
    this.escaped = false;
  }

  /** Scans one JSON value (or a key) byte by byte until it ends; keeps its bytes (bounded). */
  private scan(chunk: Buffer, from: number): number {
    let i = from;
    let ended = false;
    for (; i < chunk.length; i++) {
      const c = chunk[i]!;
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (c === BACKSLASH) this.escaped = true;
        else if (c === QUOTE) {
          this.inString = false;
          if (this.depth === 0) {
            i++;
            ended = true;
            break;
          }
        }
        continue;
      }
      if (c === QUOTE) this.inString = true;
      else if (c === 0x7b || c === 0x5b) this.depth++;
      else if (c === 0x7d || c === 0x5d) {
        if (this.depth === 0) {
          ended = true; // a scalar value ended by the object's closing brace
          break;
        }
        this.depth--;
        if (this.depth === 0) {
          i++;
          ended = true;
          break;
        }
      } else if (this.depth === 0 && (c === 0x2c || WS.has(c))) {
        ended = true; // a scalar (number, true, null) ended
        break;
      }
    }
    this.keep(chunk.subarray(from, i));
    if (ended) this.finishCapture();
    return i;
  }

  private keep(part: Buffer): void {
    this.rawBytes += part.length;
    if (this.rawBytes > MAX_FIELDS_BYTES) throw new BodyError(413, 'Payload exceeds maximum transfer size');
    if (part.length) this.raw.push(Buffer.from(part));
  }

  private finishCapture(): void {
    const text = Buffer.concat(this.raw).toString('utf8');
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw invalid();
    }
    if (this.capturing === 'key') {
      if (typeof value !== 'string') throw invalid();
      this.key = value;
      this.keys++;
      this.state = 'colon';
    } else {
      if (this.key === 'data') this.result.dataIsString = false;
      this.result.fields[this.key] = value;
      this.state = 'comma';
    }
    this.capturing = undefined;
  }

  /** Data string bytes from `from` up to its closing quote (or the chunk's end). */
  private async dataBytes(chunk: Buffer, from: number): Promise<number> {
    let i = from;
    if (this.dataEscape) {
      // JSON allows `\/` for `/`; any other escape cannot be base64.
      this.dataEscape = false;
      if (chunk[i] !== 0x2f) {
        this.badBase64('Non-base64 digit found');
        return i;
      }
      await this.dataText('/');
      return i + 1;
    }
    const quote = chunk.indexOf(QUOTE, i);
    const slash = chunk.indexOf(BACKSLASH, i);
    const stop = [quote, slash].filter((p) => p !== -1).reduce((a, b) => Math.min(a, b), chunk.length);
    if (stop > i) await this.dataText(chunk.subarray(i, stop).toString('latin1'));
    i = stop;
    if (i < chunk.length && chunk[i] === BACKSLASH) {
      this.dataEscape = true;
      return i + 1;
    }
    if (i < chunk.length && chunk[i] === QUOTE) {
      this.inData = false;
      this.state = 'comma';
      return i + 1;
    }
    return i;
  }

  /** Remembers the first base64 problem; the rest of `data` is only counted. */
  private badBase64(why: string): void {
    this.result.base64Error ??= `Invalid base64 data: ${why}`;
  }

  private async dataText(text: string): Promise<void> {
    this.result.dataChars += text.length;
    const maxChars = Math.ceil((this.maxDecoded * 4) / 3) + 4;
    if (this.result.dataChars > maxChars) throw new BodyError(413, 'Payload exceeds maximum transfer size');
    if (this.result.base64Error) return; // counted, no longer decoded
    if (NOT_B64.test(text)) return this.badBase64('Non-base64 digit found');
    const all = this.carry + text;
    const whole = all.length - (all.length % 4);
    this.carry = all.slice(whole);
    if (whole) await this.decode(all.slice(0, whole), false);
  }

  private async decode(quartets: string, final: boolean): Promise<void> {
    if (this.result.base64Error) return;
    if (final && quartets.length % 4) return this.badBase64('Incorrect padding');
    if (this.padded) return this.badBase64('Incorrect padding'); // data after padding
    const pad = quartets.indexOf('=');
    if (pad !== -1) {
      // Padding only in the last quartet of the whole string: at most two, at its end.
      if (pad < quartets.length - 2 || !/^={1,2}$/.test(quartets.slice(pad))) return this.badBase64('Incorrect padding');
      this.padded = true;
    }
    const bytes = Buffer.from(quartets, 'base64');
    this.result.decodedBytes += bytes.length;
    if (this.result.decodedBytes > this.maxDecoded) throw new BodyError(413, 'Decoded payload exceeds maximum transfer size');
    if (!this.out!.write(bytes)) await once(this.out!, 'drain');
  }
}

function invalid(): BodyError {
  return new BodyError(400, 'Invalid JSON body');
}


