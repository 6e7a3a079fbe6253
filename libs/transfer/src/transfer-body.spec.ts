import { describe, expect, it } from 'vitest';
import { isBase64, parseTransferBody } from './transfer-body';

const parse = (s: string) => parseTransferBody(Buffer.from(s));

describe('parseTransferBody', () => {
  it('answers like JSON.parse for our layout and the reference (Python) layout', () => {
    for (const body of [
      { variable_name: 'x', metadata: { source_server: 'a' }, session_id: 's', data: 'AAAA' },
      { variable_name: 'x', data: 'QUJD', metadata: { transfer_id: 't' } },
    ]) {
      expect(parse(JSON.stringify(body))).toEqual(body);
      expect(parse(JSON.stringify(body, null, 2))).toEqual(body);
    }
  });

  it('falls back to a full parse when "data" also appears elsewhere or holds escapes', () => {
    const tricky = { variable_name: 'x', metadata: { note: '"data":"zzzz"' }, data: 'QUJD' };
    expect(parse(JSON.stringify(tricky))).toEqual(tricky);
    const nested = { variable_name: 'x', metadata: { data: 'AAAA' }, data: 'QUJD' };
    expect(parse(JSON.stringify(nested))).toEqual(nested);
    expect(parse('{"variable_name":"x","data":"QU\\u004aD"}')).toEqual({ variable_name: 'x', data: 'QUJD' });
    expect(parse('{"variable_name":"x","data":12}')).toEqual({ variable_name: 'x', data: 12 });
  });

  it('refuses what is not a JSON object', () => {
    expect(parse('{nope')).toBeUndefined();
    expect(parse('[1]')).toBeUndefined();
    expect(parse('{"data":"AAAA"')).toBeUndefined();
  });
});

describe('isBase64', () => {
  it('accepts strict standard base64 only', () => {
    for (const ok of ['', 'QUJD', 'QUI=', 'QQ==', 'ab+/']) expect({ ok, v: isBase64(ok) }).toEqual({ ok, v: true });
    for (const bad of ['QUJ', 'Q===', 'QU=D', '=QUJ', 'QU-_', 'QU J', 'QQ=A']) expect({ bad, v: isBase64(bad) }).toEqual({ bad, v: false });
  });
});
