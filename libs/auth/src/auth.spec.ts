import { describe, expect, it } from 'vitest';
import { allowedHostsFor, isLoopback, noopPrincipal, noopToken, unauthenticatedRemoteRefusal } from '@stoa/auth';

const jwt = (claims: object) => `x.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.y`;

describe('no-op auth principal (reference §7.3)', () => {
  it('is dev-user@dev-tenant without a token or with a non-JWT token', () => {
    expect(noopPrincipal(undefined).id).toBe('dev-user@dev-tenant');
    expect(noopPrincipal('Bearer not-a-jwt').id).toBe('dev-user@dev-tenant');
  });
  it('uses oid (else sub) and tid (else the issuer tenant) of an unverified JWT', () => {
    expect(noopPrincipal(`Bearer ${jwt({ oid: 'o1', tid: 't1' })}`).id).toBe('o1@t1');
    expect(noopPrincipal(`Bearer ${jwt({ sub: 's1', iss: 'https://login.microsoftonline.com/ten/v2.0' })}`).id).toBe(
      's1@ten',
    );
    expect(noopPrincipal(`Bearer ${jwt({ sub: 's1', iss: 'https://sts.windows.net/ten2/' })}`).id).toBe('s1@ten2');
    expect(noopPrincipal(`Bearer ${jwt({ sub: 's1' })}`).id).toBe('s1@default');
  });
  it('turns a principal back into an unsigned JWT that resolves to the same principal', () => {
    for (const p of [
      noopPrincipal(undefined),
      noopPrincipal(`Bearer ${jwt({ sub: 'a@b.example', tid: 't', roles: ['R'], scp: 'x y', name: 'A' })}`),
    ]) {
      const again = noopPrincipal(`Bearer ${noopToken(p)}`);
      expect({ ...again, token: undefined }).toEqual({ ...p, token: undefined });
    }
  });
});

describe('bind rules', () => {
  it('recognises loopback addresses', () => {
    expect(['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]'].every(isLoopback)).toBe(true);
    expect(['0.0.0.0', '10.0.0.1', '::', 'example.com'].some(isLoopback)).toBe(false);
  });
  it('refuses a non-loopback no-op bind naming both acknowledgements', () => {
    expect(unauthenticatedRemoteRefusal('127.0.0.1')).toBeUndefined();
    const msg = unauthenticatedRemoteRefusal('0.0.0.0') ?? '';
    expect(msg).toContain('--allow-unauthenticated-remote');
    expect(msg).toContain('STOA_ALLOW_UNAUTHENTICATED_REMOTE=1');
  });
  it('derives allowed Host names from the bind address', () => {
    expect(allowedHostsFor('127.0.0.1', [])).toContain('localhost');
    expect(allowedHostsFor('0.0.0.0', [])).toBeUndefined();
    expect(allowedHostsFor('10.1.2.3', ['stoa.internal'])).toEqual(['10.1.2.3', 'stoa.internal']);
  });
});
