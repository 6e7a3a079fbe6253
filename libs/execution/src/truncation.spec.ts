import { describe, expect, it } from 'vitest';
import { OutputCapture } from '@stoa/kernel';
import { resolveTruncationThreshold, truncateStderr, truncateStdout } from '@stoa/execution';

function captured(text: string, limit: number): OutputCapture {
  const c = new OutputCapture(limit, limit);
  for (let i = 0; i < text.length; i += 7) c.append(text.slice(i, i + 7));
  return c;
}

describe('output truncation (reference §1.2.1)', () => {
  it('leaves output at or under the limit untouched', () => {
    expect(truncateStdout(captured('x'.repeat(100), 100), 100)).toBe('x'.repeat(100));
    expect(truncateStderr(captured('y'.repeat(100), 100), 100)).toBe('y'.repeat(100));
  });

  it('keeps the head of stdout with a marker using thousands separators', () => {
    const out = truncateStdout(captured('a'.repeat(60_000), 50_000), 50_000);
    expect(
      out.startsWith(
        'a'.repeat(50_000) + '\n[OUTPUT TRUNCATED: 60,000 characters exceeded the 50,000 character limit.',
      ),
    ).toBe(true);
    expect(out).toContain('print(result[:200])');
  });

  it('keeps head and tail halves of stderr so the end of a traceback stays visible', () => {
    const text = 'H'.repeat(30) + 'M'.repeat(100) + 'T'.repeat(30);
    const out = truncateStderr(captured(text, 60), 60);
    expect(
      out.startsWith('H'.repeat(30) + '\n[STDERR TRUNCATED: 160 characters exceeded the 60 character limit.'),
    ).toBe(true);
    expect(out.endsWith(']\n' + 'T'.repeat(30))).toBe(true);
  });

  it('keeps server memory bounded: a capture holds head + tail only', () => {
    const c = new OutputCapture(10, 10);
    for (let i = 0; i < 10_000; i++) c.append('0123456789');
    expect(c.length).toBe(100_000);
    expect(c.complete).toBe(false);
    expect(c.text()).toHaveLength(20);
  });
});

describe('resolveTruncationThreshold', () => {
  const warnings: string[] = [];
  const warn = (m: string) => warnings.push(m);
  it('prefers config, then the env variable (underscores allowed), then 50000', () => {
    expect(resolveTruncationThreshold(10, '99', warn)).toBe(10);
    expect(resolveTruncationThreshold(null, ' 60_000 ', warn)).toBe(60_000);
    expect(resolveTruncationThreshold(null, undefined, warn)).toBe(50_000);
    expect(resolveTruncationThreshold(null, '0', warn)).toBe(0);
  });
  it('falls back to 50000 with a warning on an invalid or negative env value', () => {
    expect(resolveTruncationThreshold(null, '-5', warn)).toBe(50_000);
    expect(resolveTruncationThreshold(null, 'lots', warn)).toBe(50_000);
    expect(warnings).toHaveLength(2);
  });
});
