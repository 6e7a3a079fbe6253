import { describe, expect, it } from 'vitest';
import { closeMatches, qualifyToolName, SERVER_NAME_PATTERN, splitQualifiedName } from './tool-names';

describe('tool names', () => {
  it('splits a qualified name at the first separator, so tool names may contain "__"', () => {
    expect(splitQualifiedName(qualifyToolName('alpha', 'do__it'))).toEqual({ server: 'alpha', tool: 'do__it' });
  });

  it('does not split a name without a server prefix', () => {
    expect(splitQualifiedName('execute_alpha_code')).toBeUndefined();
    expect(splitQualifiedName('__tool')).toBeUndefined();
  });

  it('refuses server names that would make the split ambiguous', () => {
    expect(['alpha', 'my-server', 'a_b', 'A1'].every((n) => SERVER_NAME_PATTERN.test(n))).toBe(true);
    expect(['a__b', '_a', 'a_', 'a.b', ''].some((n) => SERVER_NAME_PATTERN.test(n))).toBe(false);
  });

  it('suggests the qualified name for a bare tool name, then typos, and nothing unrelated', () => {
    const catalog = ['alpha__execute_alpha_code', 'beta__execute_beta_code', 'alpha__alpha_list_sessions'];
    expect(closeMatches('execute_beta_code', catalog)[0]).toBe('beta__execute_beta_code');
    expect(closeMatches('alpha__execute_alpah_code', catalog)[0]).toBe('alpha__execute_alpha_code');
    expect(closeMatches('weather_forecast', catalog)).toEqual([]);
  });
});
