import { describe, expect, it } from 'vitest';
import { randomId, randomToken } from './ids';

describe('random ids from the pooled CSPRNG', () => {
  it('hands out every byte once: 20,000 tokens across several pool refills are distinct and well formed', () => {
    const tokens = Array.from({ length: 20_000 }, () => randomToken());
    expect(new Set(tokens).size).toBe(tokens.length);
    for (const t of tokens.slice(0, 50)) expect(t).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });

  it('keeps sizes: hex ids of the asked length, large tokens straight from the CSPRNG', () => {
    expect(randomId('j_')).toMatch(/^j_[0-9a-f]{12}$/);
    expect(randomId('h_', 31)).toMatch(/^h_[0-9a-f]{31}$/);
    expect(Buffer.from(randomToken(512), 'base64url')).toHaveLength(512);
  });
});
