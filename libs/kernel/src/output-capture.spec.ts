import { describe, expect, it } from 'vitest';
import { OutputCapture } from './output-capture';

describe('OutputCapture', () => {
  it('keeps all text while it fits, and says so', () => {
    const c = new OutputCapture(10, 10);
    c.append('hello ');
    c.append('world');
    expect(c.complete).toBe(true);
    expect(c.text()).toBe('hello world');
    expect(c.length).toBe(11);
  });

  it('keeps the head and the tail of a long stream and counts every character', () => {
    const seen: string[] = [];
    const c = new OutputCapture(3, 4, (t) => seen.push(t));
    for (const part of ['abc', 'defgh', 'ijklmnop']) c.append(part);
    expect(c.complete).toBe(false);
    expect(c.length).toBe(16);
    expect(c.head(3)).toBe('abc');
    expect(c.tail(4)).toBe('mnop');
    expect(seen).toEqual(['abc', 'defgh', 'ijklmnop']);
  });
});
