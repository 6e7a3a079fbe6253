import { StringDecoder } from 'node:string_decoder';
import { none } from 'stream-chain/defs.js';
import type { Token } from 'stream-json/core/parser.js';
import { pieceTokenizer } from '@stoa/transfer';

/** Longest `session_id` value taken from a body (longer ones are not session ids: the body routes as without). */
const MAX_ID_CHARS = 512;

/**
 * Finds the top-level `session_id` string of an object-transfer body (`{variable_name, data, metadata,
 * session_id?}`) as its chunks pass, holding nothing but the id: stream-json tokenizes, nested keys and every
 * other value are skipped. `found` is set once the id's string is complete; `done` once the id is known or the
 * body has ended. A body that is not JSON ends the scan with no id (the worker refuses it in its own words).
 */
export class SessionOfBody {
  private readonly tokenize = pieceTokenizer();
  private readonly utf8 = new StringDecoder('utf8');
  private depth = 0;
  private key = '';
  private inKey = false;
  private value: string | undefined;
  found: string | undefined;
  done = false;

  feed(chunk: Buffer): void {
    if (!this.done) this.consume(this.utf8.write(chunk));
  }

  end(): void {
    if (!this.done) this.consume(this.utf8.end());
    if (!this.done) this.consume(none);
    this.done = true;
  }

  private consume(input: string | typeof none): void {
    let tokens: Token[];
    try {
      tokens = this.tokenize(input);
    } catch {
      this.done = true;
      return;
    }
    for (const t of tokens) {
      this.token(t);
      if (this.done) return;
    }
  }

  private token(t: Token): void {
    switch (t.name) {
      case 'startObject':
      case 'startArray':
        this.depth++;
        return;
      case 'endObject':
      case 'endArray':
        this.depth--;
        return;
      case 'startKey':
        if (this.depth === 1) {
          this.inKey = true;
          this.key = '';
        }
        return;
      case 'endKey':
        this.inKey = false;
        return;
      case 'startString':
        if (this.depth === 1 && this.key === 'session_id') this.value = '';
        return;
      case 'stringChunk':
        if (this.inKey && this.key.length <= MAX_ID_CHARS) this.key += String(t.value);
        else if (this.value !== undefined && this.value.length <= MAX_ID_CHARS) this.value += String(t.value);
        return;
      case 'endString':
        if (this.value !== undefined) {
          if (this.value && this.value.length <= MAX_ID_CHARS) {
            this.found = this.value;
            this.done = true;
          }
          this.value = undefined;
        }
        return;
      default:
        return;
    }
  }
}
