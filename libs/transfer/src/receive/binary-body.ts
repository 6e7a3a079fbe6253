import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { TransferBodyError, TransferTooLargeError } from './receive.errors';
import type { ParsedTransferBody } from './transfer-body';

/**
 * Stoa's binary object transfer, negotiated between Stoa servers (other peers get the reference's base64 JSON):
 * the body is the serialised object itself (`Content-Type: application/vnd.stoa.object`, exact Content-Length)
 * and the envelope's other fields — `{variable_name, metadata, session_id?}` — travel base64url-encoded JSON in
 * the `X-Stoa-Object` header. No base64 on either side: a third fewer bytes, and no encode/decode pass.
 */
export const BINARY_OBJECT_TYPE = 'application/vnd.stoa.object';
export const OBJECT_FIELDS_HEADER = 'x-stoa-object';
/** Largest `X-Stoa-Object` value (Node's default header limit is 16 KiB for all headers together). */
export const MAX_FIELDS_HEADER_CHARS = 8 * 1024;

/** What `GET /object-transfer/receive` answers: the body formats this endpoint reads. */
export const RECEIVE_FORMATS = { formats: ['application/json', BINARY_OBJECT_TYPE] } as const;

export function isBinaryObject(contentType: string | undefined): boolean {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase() === BINARY_OBJECT_TYPE;
}

export function encodeObjectFields(fields: Record<string, unknown>): string {
  return Buffer.from(JSON.stringify(fields)).toString('base64url');
}

/** The envelope's fields from the header; a missing or unreadable header is refused with what to send. */
export function decodeObjectFields(header: string | string[] | undefined): Record<string, unknown> {
  const refuse = () =>
    new TransferBodyError(
      `A ${BINARY_OBJECT_TYPE} body needs the ${OBJECT_FIELDS_HEADER} header: base64url of the JSON {variable_name, metadata, session_id?} (at most ${MAX_FIELDS_HEADER_CHARS} characters). Send it, or send the reference's JSON body instead.`,
    );
  if (typeof header !== 'string' || !header || header.length > MAX_FIELDS_HEADER_CHARS) throw refuse();
  try {
    const v = JSON.parse(Buffer.from(header, 'base64url').toString('utf8')) as unknown;
    if (!v || typeof v !== 'object' || Array.isArray(v)) throw refuse();
    return v as Record<string, unknown>;
  } catch {
    throw refuse();
  }
}

/**
 * Writes a binary body to `file` as it arrives (with backpressure), refusing it once it passes `maxBytes`; the
 * result reads like a parsed JSON envelope so both formats are validated and loaded by the same code.
 */
export async function readBinaryBody(
  body: AsyncIterable<Buffer>,
  fields: Record<string, unknown>,
  file: string,
  maxBytes: number,
): Promise<ParsedTransferBody> {
  const out = createWriteStream(file, { mode: 0o600 });
  let size = 0;
  try {
    for await (const chunk of capBody(body, maxBytes)) {
      size += chunk.length;
      if (!out.write(chunk)) await once(out, 'drain');
    }
    out.end();
    await once(out, 'close');
  } catch (err) {
    out.destroy();
    await once(out, 'close').catch(() => undefined);
    throw err;
  }
  return { fields, dataIsString: true, dataChars: size, decodedBytes: size };
}

/** `body` as it arrives, ended with TransferTooLargeError once it has passed `maxBytes` in all. */
export async function* capBody(body: AsyncIterable<Buffer>, maxBytes: number): AsyncGenerator<Buffer> {
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > maxBytes) throw new TransferTooLargeError('Payload exceeds maximum transfer size');
    yield chunk;
  }
}
