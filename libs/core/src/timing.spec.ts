import { describe, expect, it } from 'vitest';
import { settlesWithin } from '@stoa/core';

describe('settlesWithin', () => {
  it('is true for a promise that resolves or rejects in time, false for one that does not', async () => {
    expect(await settlesWithin(Promise.resolve(1), 50)).toBe(true);
    expect(await settlesWithin(Promise.reject(new Error('x')), 50)).toBe(true);
    expect(await settlesWithin(new Promise(() => undefined), 20)).toBe(false);
  });
});
