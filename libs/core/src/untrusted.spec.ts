import { describe, expect, it } from 'vitest';
import { clip, jsonNestsDeeper, kindOf, OFF_LOOP_BYTES, parseJsonBody } from '@stoa/core';

describe('clip', () => {
  it('keeps a short value whole', () => {
    expect(clip('execute_demo_code')).toBe('execute_demo_code');
  });

  it('cuts a long value to a prefix that says how long the whole was', () => {
    const out = clip('a'.repeat(10 * 1024 * 1024), 10);
    expect(out).toBe('aaaaaaaaaa… (10485760 characters)');
  });

  it('never leaves half a surrogate pair at the cut', () => {
    expect(clip(`abc${'😀'.repeat(10)}`, 4)).toBe('abc… (23 characters)');
  });

  it('names anything but a string by its type instead of serialising it', () => {
    expect(clip({ big: 'x'.repeat(1000) })).toBe('(an object)');
    expect([kindOf([]), kindOf(null), kindOf(5), kindOf(undefined)]).toEqual([
      'an array',
      'null',
      'a number',
      'undefined',
    ]);
  });
});

describe('jsonNestsDeeper', () => {
  const buf = (s: string) => Buffer.from(s);

  it('counts nested arrays and objects', () => {
    expect(jsonNestsDeeper(buf('{"a":[[{"b":1}]]}'), 4)).toBe(false);
    expect(jsonNestsDeeper(buf('{"a":[[{"b":[1]}]]}'), 4)).toBe(true);
  });

  it('ignores brackets inside strings, escaped quotes included', () => {
    expect(jsonNestsDeeper(buf(JSON.stringify({ s: '[[[[[[\\"[[[[' })), 2)).toBe(false);
    expect(jsonNestsDeeper(buf(JSON.stringify({ s: 'a\\', t: [[[1]]] })), 3)).toBe(true);
  });

  it('finds 10k levels in a few milliseconds and scans 10 MB of flat data quickly', () => {
    const deep = buf('['.repeat(10_000) + ']'.repeat(10_000));
    expect(jsonNestsDeeper(deep, 100)).toBe(true);
    const flat = buf(
      JSON.stringify({ code: 'x'.repeat(10 * 1024 * 1024), list: Array.from({ length: 100_000 }, (_, i) => i) }),
    );
    const t0 = performance.now();
    expect(jsonNestsDeeper(flat, 100)).toBe(false);
    expect(performance.now() - t0).toBeLessThan(50);
  });
});

describe('parseJsonBody', () => {
  it('parses a small body inline and refuses a scalar or too deep one with the reason', async () => {
    expect((await parseJsonBody(Buffer.from('{"a":[1]}'), 10)).value).toEqual({ a: [1] });
    await expect(parseJsonBody(Buffer.from('5'), 10)).rejects.toMatchObject({
      status: 400,
      type: 'entity.parse.failed',
    });
    await expect(parseJsonBody(Buffer.from(nestedText(20)), 10)).rejects.toMatchObject({
      status: 400,
      type: 'entity.too.deep',
      message: 'JSON nested deeper than 10 levels',
    });
  });

  it('parses a large body on the worker thread with the same rules', async () => {
    const name = 'a'.repeat(OFF_LOOP_BYTES * 4);
    const body = Buffer.from(JSON.stringify({ params: { name } }));
    const parsed = await parseJsonBody(Buffer.from(body), 10);
    expect(parsed.value).toEqual({ params: { name } });
    expect(parsed.bytes.equals(body)).toBe(true); // the raw bytes come back from the thread intact
    await expect(parseJsonBody(Buffer.from(`{"pad":"${name}","x":${nestedText(20)}}`), 10)).rejects.toMatchObject({
      type: 'entity.too.deep',
    });
    await expect(parseJsonBody(Buffer.from(`{"pad":"${name}",}`), 10)).rejects.toMatchObject({
      type: 'entity.parse.failed',
    });
  });
});

function nestedText(levels: number): string {
  return '['.repeat(levels) + ']'.repeat(levels);
}
