import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HTTP_STATUS } from '@stoa/auth';
import { isAppError } from '@stoa/core';
import { TransferBodyParser } from './transfer-body';

const dir = mkdtempSync(join(tmpdir(), 'stoa-body-'));
let n = 0;

/** Feeds `body` in chunks of `size` bytes; the parsed fields and the decoded file, or the refusal as the endpoint answers it. */
async function parse(body: string | Buffer, size = 7, max = 1024) {
  const file = join(dir, `d${n++}`);
  const p = new TransferBodyParser(file, max);
  const buf = Buffer.isBuffer(body) ? body : Buffer.from(body);
  try {
    for (let i = 0; i < buf.length; i += size) await p.write(buf.subarray(i, i + size));
    const r = await p.end();
    return { ...r, bytes: r.dataIsString ? readFileSync(file) : undefined };
  } catch (err) {
    await p.abort();
    if (isAppError(err)) return { status: HTTP_STATUS[err.kind], error: err.message };
    throw err;
  }
}

describe('TransferBodyParser', () => {
  const data = Buffer.from('hello, transfer!').toString('base64');

  it.each([1, 3, 7, 1000])('parses our layout and the reference layout in %i-byte chunks', async (size) => {
    for (const body of [
      { variable_name: 'x', metadata: { source_server: 'a', nested: [1, { b: '}' }] }, session_id: 's', data },
      { variable_name: 'x', data, metadata: { transfer_id: 't', note: 'a "data": "zz" lookalike' } },
    ]) {
      const r = await parse(JSON.stringify(body, null, size === 3 ? 2 : undefined), size);
      const fields = Object.fromEntries(Object.entries(body).filter(([k]) => k !== 'data'));
      expect(r).toMatchObject({ fields, dataIsString: true, dataChars: data.length, decodedBytes: 16 });
      expect((r as { bytes?: Buffer }).bytes?.toString()).toBe('hello, transfer!');
    }
  });

  it('accepts JSON-escaped slashes in data and scalars of every kind in other fields', async () => {
    const b64 = Buffer.from([0xff, 0xff, 0xfe]).toString('base64'); // "///+"
    const r = await parse(`{"variable_name":"v","n":12.5,"t":true,"z":null,"data":"${b64.replace(/\//g, '\\/')}"}`, 2);
    expect(r).toMatchObject({ fields: { variable_name: 'v', n: 12.5, t: true, z: null }, dataIsString: true });
    expect([...((r as { bytes?: Buffer }).bytes ?? [])]).toEqual([0xff, 0xff, 0xfe]);
  });

  it('reads data as JSON first, as the reference does: a \\u escape of a base64 digit is that digit', async () => {
    const r = await parse('{"variable_name":"v","data":"\\u0041AAA"}', 3);
    expect(r).toMatchObject({ fields: { variable_name: 'v' }, dataIsString: true, dataChars: 4, decodedBytes: 3 });
    expect([...((r as { bytes?: Buffer }).bytes ?? [])]).toEqual([...Buffer.from('AAAA', 'base64')]);
  });

  it('keeps UTF-8 characters split across chunks and bounds the other fields at 1 MiB', async () => {
    const note = 'naïve ✓ 𝄞';
    expect(await parse(JSON.stringify({ variable_name: 'v', metadata: { note }, data: 'QUJD' }), 1)).toMatchObject({
      fields: { metadata: { note } },
      decodedBytes: 3,
    });
    expect(await parse(JSON.stringify({ metadata: 'x'.repeat(1024 * 1024 + 1), data: 'QUJD' }), 64 * 1024)).toEqual({
      status: 413,
      error: 'Payload exceeds maximum transfer size',
    });
  });

  it('reports a non-string data field as such', async () => {
    expect(await parse('{"variable_name":"v","data":12}')).toMatchObject({
      fields: { variable_name: 'v', data: 12 },
      dataIsString: false,
    });
    expect(await parse('{}')).toMatchObject({ fields: {}, dataIsString: false });
  });

  it('refuses bad JSON, bad base64 and oversized bodies with the reference answers', async () => {
    for (const bad of ['{nope', '[1]', '{"data":"QUJD"', '{"a":1,}', '{"a":1} x', '{"data":"QUJD","data":"QUJD"}']) {
      expect({ bad, r: await parse(bad) }).toEqual({ bad, r: { status: 400, error: 'Invalid JSON body' } });
    }
    // Base64 problems are reported after the field checks (reference order), not thrown.
    for (const [data, why] of [
      ['QU J', 'Non-base64 digit found'],
      ['QUJ', 'Incorrect padding'],
      ['QQ==QUJD', 'Incorrect padding'],
      ['QQ=A', 'Incorrect padding'],
      ['QU\\nJ', 'Non-base64 digit found'],
      ['\\u0020AAA', 'Non-base64 digit found'],
    ]) {
      expect({ data, r: await parse(`{"data":"${data}","variable_name":"v"}`) }).toMatchObject({
        data,
        r: { fields: { variable_name: 'v' }, dataIsString: true, base64Error: `Invalid base64 data: ${why}` },
      });
    }
    const big = Buffer.alloc(801).toString('base64'); // within the character bound, one byte over when decoded
    expect(await parse(`{"data":"${big}"}`, 64, 800)).toEqual({
      status: 413,
      error: 'Decoded payload exceeds maximum transfer size',
    });
    const huge = Buffer.alloc(3000).toString('base64');
    expect(await parse(`{"data":"${huge}"}`, 64, 800)).toEqual({
      status: 413,
      error: 'Payload exceeds maximum transfer size',
    });
  });
});
