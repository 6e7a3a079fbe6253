import { describe, expect, it } from 'vitest';
import { describeError } from './multi-server.errors';

describe('describeError', () => {
  it("follows causes, as Node's fetch hides the socket error in one", () => {
    const err = new TypeError('fetch failed', {
      cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8001'), { code: 'ECONNREFUSED' }),
    });
    expect(describeError(err)).toBe('fetch failed: connect ECONNREFUSED 127.0.0.1:8001');
  });

  it('adds an error code the message does not already name', () => {
    expect(describeError(Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }))).toBe(
      'other side closed (UND_ERR_SOCKET)',
    );
  });
});
