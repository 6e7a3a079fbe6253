import { createWriteStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import { StringDecoder } from 'node:string_decoder';
import { getManyValues, isMany, type Many, none } from 'stream-chain/defs.js';
import { Assembler } from 'stream-json/core/assembler.js';
import { jsonParser, type Token } from 'stream-json/core/parser.js';
import { TransferBodyError, TransferTooLargeError } from './receive.errors';

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

const NOT_B64 = /[^A-Za-z0-9+/=]/;
const MAX_FIELDS_CHARS = 1024 * 1024;
/** Every key, string and number arrives in pieces: nothing is accumulated inside the tokenizer. */
const PIECEWISE = { packValues: false, streamValues: true } as const;

/**
 * A push tokenizer for a JSON body that holds nothing: each call takes the next text (or `none` at the end, to
 * flush) and returns its tokens, keys, strings and numbers in pieces; it throws on text that is not JSON.
 */
export function pieceTokenizer(): (input: string | typeof none) => Token[] {
  const tokenize = jsonParser(PIECEWISE) as (input: string | typeof none) => Many<Token> | typeof none;
  return (input) => {
    if (input === '') return [];
    const out = tokenize(input);
    if (out === none) return [];
    return isMany(out) ? getManyValues(out) : [out];
  };
}

const invalidJson = () => new TransferBodyError('Invalid JSON body');
const tooLarge = () => new TransferTooLargeError('Payload exceeds maximum transfer size');

/**
 * A push parser for `{variable_name, data, metadata, session_id?}` that never holds the body: stream-json
 * tokenizes it, the base64 `data` string is validated and decoded as its pieces arrive and written to a file, and
 * the other (small, bounded) fields are assembled. Any key order works (the reference sends `data` second, we
 * send it last).
 */
export class TransferBodyParser {
  /** Called with `none` at the end to flush (stream-chain's protocol, which its `Flushable` type leaves out). */
  private readonly tokenize = pieceTokenizer();
  private readonly utf8 = new StringDecoder('utf8');
  /** Builds every top-level field except the `data` string. */
  private readonly fields = new Assembler();
  private started = false;
  /** The key, string or number whose pieces are arriving. */
  private piece: string | undefined;
  private fieldChars = 0;
  private inData = false;
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
    await this.consume(this.tokens(this.utf8.write(chunk)));
  }

  /** Ends the body: the parsed fields, after the data file is complete. */
  async end(): Promise<ParsedTransferBody> {
    await this.consume([...this.tokens(this.utf8.end()), ...this.tokens(none)]);
    if (!this.started || !this.fields.done) throw invalidJson();
    this.result.fields = this.fields.current as Record<string, unknown>;
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

  private tokens(input: string | typeof none): Token[] {
    try {
      return this.tokenize(input);
    } catch {
      throw invalidJson();
    }
  }

  /** Handles one write's tokens; the `data` pieces among them are decoded together. */
  private async consume(tokens: Token[]): Promise<void> {
    let data = '';
    for (const token of tokens) {
      if (this.inData) {
        if (token.name === 'stringChunk') data += token.value;
        else this.inData = false; // endString
      } else this.field(token);
    }
    if (data) await this.dataText(data);
  }

  private field(token: Token): void {
    if (!this.started) {
      if (token.name !== 'startObject') throw invalidJson();
      this.started = true;
    }
    switch (token.name) {
      case 'startString':
        if (this.fields.depth === 1 && this.fields.key === 'data') return this.openData();
        this.piece = '';
        return;
      case 'startKey':
      case 'startNumber':
        this.piece = '';
        return;
      case 'stringChunk':
      case 'numberChunk':
        this.fieldChars += token.value.length;
        if (this.fieldChars > MAX_FIELDS_CHARS) throw tooLarge();
        this.piece += token.value;
        return;
      case 'endKey':
        return this.fields.keyValue(this.ended());
      case 'endString':
        return this.fields.stringValue(this.ended());
      case 'endNumber':
        return this.fields.numberValue(this.ended());
      default:
        this.fields.consume(token);
    }
  }

  private ended(): string {
    const text = this.piece ?? '';
    this.piece = undefined;
    return text;
  }

  private openData(): void {
    if (this.out) throw invalidJson(); // a second "data"
    this.inData = true;
    this.result.dataIsString = true;
    this.out = createWriteStream(this.dataFile, { mode: 0o600 });
  }

  /** Remembers the first base64 problem; the rest of `data` is only counted. */
  private badBase64(why: string): void {
    this.result.base64Error ??= `Invalid base64 data: ${why}`;
  }

  private async dataText(text: string): Promise<void> {
    this.result.dataChars += text.length;
    const maxChars = Math.ceil((this.maxDecoded * 4) / 3) + 4;
    if (this.result.dataChars > maxChars) throw tooLarge();
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
      if (pad < quartets.length - 2 || !/^={1,2}$/.test(quartets.slice(pad)))
        return this.badBase64('Incorrect padding');
      this.padded = true;
    }
    const bytes = Buffer.from(quartets, 'base64');
    this.result.decodedBytes += bytes.length;
    if (this.result.decodedBytes > this.maxDecoded)
      throw new TransferTooLargeError('Decoded payload exceeds maximum transfer size');
    if (!this.out!.write(bytes)) await once(this.out!, 'drain');
  }
}
