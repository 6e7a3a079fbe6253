import { Readable } from 'node:stream';
import { request } from 'undici';
import type { OpenedFile } from '../files/safe-files';

export interface ObjectPost {
  base: URL;
  authorization?: string;
  variableName: string;
  sessionId?: string;
  metadata: Record<string, unknown>;
  file: OpenedFile;
  timeoutMs: number;
}

/**
 * POSTs `{variable_name, data: base64(file), metadata, session_id?}` to `{base}/object-transfer/receive` (the
 * reference's wire format) without building the JSON in memory: the base64 text is streamed from the file, and
 * Content-Length is exact so the receiver can refuse an oversized body before reading it.
 */
export async function postObject(p: ObjectPost): Promise<{ status: number; body: Record<string, unknown> }> {
  const head = JSON.stringify({
    variable_name: p.variableName,
    metadata: p.metadata,
    ...(p.sessionId ? { session_id: p.sessionId } : {}),
  });
  const prefix = Buffer.from(`${head.slice(0, -1)},"data":"`);
  const suffix = Buffer.from('"}');
  const length = prefix.length + 4 * Math.ceil(p.file.size / 3) + suffix.length;
  const url = new URL('object-transfer/receive', p.base.href.endsWith('/') ? p.base : new URL(`${p.base.href}/`));
  const res = await request(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'content-length': String(length),
      ...(p.authorization ? { authorization: p.authorization } : {}),
    },
    body: Readable.from(base64Body(prefix, p.file, suffix)),
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
