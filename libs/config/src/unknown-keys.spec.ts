import { describe, expect, it } from 'vitest';
import { nearestKey, unknownKeyProblems } from './unknown-keys';

describe('nearestKey', () => {
  const known = ['max_sessions', 'idle_timeout_minutes', 'warm_pool', 'memory_mb'];

  it('finds a key one or two edits away', () => {
    expect(nearestKey('max_sesions', known)).toBe('max_sessions');
    expect(nearestKey('warmpool', known)).toBe('warm_pool');
  });

  it('ignores case', () => {
    expect(nearestKey('Max_Sessions', known)).toBe('max_sessions');
  });

  it('treats a prefix of a key as that key', () => {
    expect(nearestKey('memory', known)).toBe('memory_mb');
  });

  it('suggests nothing for a name unlike every key', () => {
    expect(nearestKey('frobnicate', known)).toBeUndefined();
  });
});

describe('unknownKeyProblems', () => {
  it('gives one line per key with its dotted path', () => {
    expect(unknownKeyProblems('sessions', ['max_sesions', 'colour'], ['max_sessions', 'warm_pool'])).toEqual([
      'sessions.max_sesions: unknown key; did you mean max_sessions?',
      'sessions.colour: unknown key (valid keys here: max_sessions, warm_pool); fix its spelling or remove it',
    ]);
  });

  it('names a top-level key without a leading dot', () => {
    expect(unknownKeyProblems('', ['nmae'], ['name'])).toEqual(['nmae: unknown key; did you mean name?']);
  });
});
