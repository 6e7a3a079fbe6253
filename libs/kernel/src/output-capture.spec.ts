import { describe, expect, it } from 'vitest';
import { MarkerSplitter, OutputCapture } from './output-capture';

describe('MarkerSplitter', () => {
  it('routes text before the nonce marker to the capture and signals the marker, even split across chunks', () => {
    const s = new MarkerSplitter();
    const c = new OutputCapture(1000, 1000);
    let done = 0;
    s.begin('abc', c, () => done++);
    const stream = 'hello\nwor\u0000ld\n\u0000STOA:abc\u0000\nnext';
    for (const ch of stream) s.push(ch);
    expect(done).toBe(1);
    expect(c.text()).toBe('hello\nwor\u0000ld\n');
  });

  it('ignores a marker with another nonce (user output cannot end an execution early)', () => {
    const s = new MarkerSplitter();
    const c = new OutputCapture(1000, 1000);
    let done = 0;
    s.begin('real', c, () => done++);
    s.push('\u0000STOA:fake\u0000\nmore');
    expect(done).toBe(0);
    s.push('\u0000STOA:real\u0000\n');
    expect(done).toBe(1);
    expect(c.text()).toBe('\u0000STOA:fake\u0000\nmore');
  });

  it('drops output that arrives while no execution is running', () => {
    const s = new MarkerSplitter();
    s.push('stray');
    const c = new OutputCapture(100, 100);
    s.begin('n', c, () => undefined);
    s.push('x\u0000STOA:n\u0000\n');
    expect(c.text()).toBe('x');
  });
});
