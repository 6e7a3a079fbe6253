import { describe, expect, it } from 'vitest';
import { exposed, globToRegExp } from './catalog';

const matches = (glob: string, name: string): boolean => globToRegExp(glob).test(name);

describe('globToRegExp (fnmatch-style, whole name)', () => {
  it('matches a name without wildcards only exactly', () => {
    expect(matches('demo_send', 'demo_send')).toBe(true);
    expect(matches('send', 'demo_send')).toBe(false);
    expect(matches('demo', 'demo_send')).toBe(false);
    expect(matches('demo_send', 'demo_send_x')).toBe(false);
  });

  it('lets * match any run of characters, including none', () => {
    expect(matches('execute_*_code', 'execute_geo-stats_code')).toBe(true);
    expect(matches('execute_*_code', 'execute__code')).toBe(true);
    expect(matches('*_check_job', 'demo_check_job')).toBe(true);
    expect(matches('*_check_job', 'demo_check_batch')).toBe(false);
  });

  it('treats ** exactly like * (no path segments in tool names)', () => {
    for (const name of ['execute_demo_code', 'execute_a/b.c_code', 'execute__code', 'other']) {
      expect(matches('execute_**_code', name)).toBe(matches('execute_*_code', name));
    }
    expect(matches('**', '')).toBe(true);
  });

  it('lets * cross dots and slashes, as fnmatch does', () => {
    expect(matches('geo*', 'geo.buffer/v2')).toBe(true);
  });

  it('lets ? match exactly one character', () => {
    expect(matches('job_?', 'job_1')).toBe(true);
    expect(matches('job_?', 'job_')).toBe(false);
    expect(matches('job_?', 'job_12')).toBe(false);
  });

  it('supports character classes, ranges and [!…] negation', () => {
    expect(matches('tool_[ab]', 'tool_b')).toBe(true);
    expect(matches('tool_[ab]', 'tool_c')).toBe(false);
    expect(matches('v[0-9]', 'v7')).toBe(true);
    expect(matches('v[0-9]', 'vx')).toBe(false);
    expect(matches('tool_[!ab]', 'tool_c')).toBe(true);
    expect(matches('tool_[!ab]', 'tool_a')).toBe(false);
  });

  it('takes an unclosed [ literally', () => {
    expect(matches('a[b', 'a[b')).toBe(true);
    expect(matches('a[b', 'ab')).toBe(false);
  });

  it('takes regular-expression metacharacters literally', () => {
    expect(matches('a.b', 'a.b')).toBe(true);
    expect(matches('a.b', 'axb')).toBe(false);
    expect(matches('a+b', 'a+b')).toBe(true);
    expect(matches('a+b', 'aab')).toBe(false);
    expect(matches('(x)|y', '(x)|y')).toBe(true);
    expect(matches('(x)|y', 'y')).toBe(false);
    expect(matches('^$', '^$')).toBe(true);
    expect(matches('{a,b}', 'a')).toBe(false);
    expect(matches('a\\d', 'a\\d')).toBe(true);
    expect(matches('a\\d', 'a1')).toBe(false);
  });

  it('is case-sensitive', () => {
    expect(matches('send', 'Send')).toBe(false);
  });

  it('matches only the empty name with an empty glob', () => {
    expect(matches('', '')).toBe(true);
    expect(matches('', 'send')).toBe(false);
  });
});

describe('exposed', () => {
  it('exposes everything for null or a list containing *', () => {
    expect(exposed('anything', null)).toBe(true);
    expect(exposed('anything', ['nothing_like_it', '*'])).toBe(true);
  });

  it('exposes nothing for an empty list', () => {
    expect(exposed('anything', [])).toBe(false);
  });

  it('exposes a name matching any one of the patterns', () => {
    expect(exposed('buffer', ['area_*', 'buf?er'])).toBe(true);
    expect(exposed('centroid', ['area_*', 'buf?er'])).toBe(false);
  });

  it('does not treat an empty pattern as a wildcard', () => {
    expect(exposed('buffer', [''])).toBe(false);
  });
});
