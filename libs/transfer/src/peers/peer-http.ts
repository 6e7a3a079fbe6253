import { Readable } from 'node:stream';
import { LRUCache } from 'lru-cache';
import { request } from 'undici';
import type { OpenedFile } from '../files/safe-files';
import {
  BINARY_OBJECT_TYPE,
  encodeObjectFields,
  MAX_FIELDS_HEADER_CHARS,
  OBJECT_FIELDS_HEADER,
} from '../receive/binary-body';

export interface ObjectPost {
  base: URL;
  authorization?: string;
  variableName: string;
  sessionId?: string;
  metadata: Record<string, unknown>;
  /** The serialised object: a file, or (binary peers only) the bytes as the kernel produces them. */
  source: { file: OpenedFile } | { stream: AsyncIterable<Buffer> };
  timeoutMs: number;
  /** Send the raw bytes (Stoa peers that list the format) instead of the reference's base64 JSON. */
  binary?: boolean;
}

/** What each peer's receive endpoint reads, asked once per peer and remembered for a while. */
const wires = new LRUCache<string, 'binary' | 'json'>({ max: 1000, ttl: 10 * 60_000 });

/**
 * Whether the peer at `base` reads binary bodies: `GET {base}/object-transfer/receive` lists its formats on a Stoa
 * server; anything else (the reference has no such GET, an error, a timeout) means the reference's JSON.
 */
export async function peerReadsBinary(base: URL, timeoutMs: number): Promise<boolean> {
  const url = receiveUrl(base);
  let wire = wires.get(url.href);
  if (!wire) {
    wire = 'json';
    try {
      const t = Math.min(timeoutMs, 5000);
      const res = await request(url, { method: 'GET', headersTimeout: t, bodyTimeout: t });
      const text = await res.body.text();
      const formats = res.statusCode === 200 ? (JSON.parse(text) as { formats?: unknown }).formats : undefined;
      if (Array.isArray(formats) && formats.includes(BINARY_OBJECT_TYPE)) wire = 'binary';
    } catch {
      /* not a Stoa peer, or unreachable now: the JSON POST reports what is wrong */
    }
    wires.set(url.href, wire);
  }
  return wire === 'binary';
}

function receiveUrl(base: URL): URL {
  return new URL('object-transfer/receive', base.href.endsWith('/') ? base : new URL(`${base.href}/`));
}

/**
 * POSTs the object to `{base}/object-transfer/receive` without holding it in memory, with an exact Content-Length
 * so the receiver can refuse an oversized body before reading it: as the reference's
 * `{variable_name, data: base64(file), metadata, session_id?}` (the base64 text streamed from the file), or with
 * `binary` as the raw bytes with the other fields in a header (binary-body.ts). A `stream` source (binary only)
 * goes chunked, as it arrives: an error it throws aborts the request, so the peer never loads a partial object.
 */
export async function postObject(p: ObjectPost): Promise<{ status: number; body: Record<string, unknown> }> {
  const fields = {
    variable_name: p.variableName,
    metadata: p.metadata,
    ...(p.sessionId ? { session_id: p.sessionId } : {}),
  };
  const header = p.binary ? encodeObjectFields(fields) : undefined;
  const binary = header !== undefined && header.length <= MAX_FIELDS_HEADER_CHARS;
  const auth = p.authorization ? { authorization: p.authorization } : {};
  let headers: Record<string, string>;
  let payload: Readable;
  if ('stream' in p.source) {
    if (!binary) throw new Error('A streamed object can only go to a peer that reads binary bodies.');
    headers = { 'content-type': BINARY_OBJECT_TYPE, [OBJECT_FIELDS_HEADER]: header };
    payload = Readable.from(p.source.stream, { objectMode: false });
  } else if (binary) {
    headers = {
      'content-type': BINARY_OBJECT_TYPE,
      'content-length': String(p.source.file.size),
      [OBJECT_FIELDS_HEADER]: header,
    };
    payload = p.source.file.handle.createReadStream({ start: 0, autoClose: false, highWaterMark: 1024 * 1024 });
  } else {
    const { file } = p.source;
    const head = JSON.stringify(fields);
    const prefix = Buffer.from(`${head.slice(0, -1)},"data":"`);
    const suffix = Buffer.from('"}');
    const length = prefix.length + 4 * Math.ceil(file.size / 3) + suffix.length;
    headers = { 'content-type': 'application/json', 'content-length': String(length) };
    payload = Readable.from(base64Body(prefix, file, suffix));
  }
  const res = await request(receiveUrl(p.base), {
    method: 'POST',
    headers: { ...headers, ...auth },
    body: payload,
    headersTimeout: p.timeoutMs,
    bodyTimeout: p.timeoutMs,
  });
  const text = await res.body.text();
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    body = { error: text.slice(0, 500) };
  }
  return { status: res.statusCode, body };
}

async function* base64Body(prefix: Buffer, file: OpenedFile, suffix: Buffer): AsyncGenerator<Uint8Array> {
  yield prefix;
  let carry: Buffer = Buffer.alloc(0);
  for await (const chunk of file.handle.createReadStream({
    start: 0,
    autoClose: false,
    highWaterMark: 3 * 256 * 1024,
  }) as AsyncIterable<Buffer>) {
    const buf: Buffer = carry.length ? Buffer.concat([carry, chunk]) : chunk;
    const whole = buf.length - (buf.length % 3);
    if (whole) yield Buffer.from(buf.subarray(0, whole).toString('base64'));
    carry = buf.subarray(whole);
  }
  if (carry.length) yield Buffer.from(carry.toString('base64'));
  yield suffix;
}
