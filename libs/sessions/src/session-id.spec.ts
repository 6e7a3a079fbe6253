import { describe, expect, it } from 'vitest';
import { SessionIdCodec } from './session-id';

describe('SessionIdCodec', () => {
  it('mints opaque ids that carry their replica under a signature', () => {
    const codec = new SessionIdCodec('executor-1', 'k'.repeat(32));
    const id = codec.mint();
    expect(id).toMatch(/^s-[A-Za-z0-9_-]{20}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{12}$/);
    expect(codec.replicaOf(id)).toBe('executor-1');
    expect(new SessionIdCodec('other', 'k'.repeat(32)).replicaOf(id)).toBe('executor-1');
  });
  it('rejects tampered ids and ids signed with another key', () => {
    const codec = new SessionIdCodec('executor-1', 'k'.repeat(32));
    const [rand, , sig] = codec.mint().split('.');
    const forged = `${rand}.${Buffer.from('executor-2').toString('base64url')}.${sig}`;
    expect(codec.replicaOf(forged)).toBeUndefined();
    expect(new SessionIdCodec('x', 'z'.repeat(32)).replicaOf(codec.mint())).toBeUndefined();
    expect(codec.replicaOf('garbage')).toBeUndefined();
  });
  it('reads the replica an id claims without the key, and nothing from a malformed id', () => {
    const id = new SessionIdCodec('executor-1', 'k'.repeat(32)).mint();
    expect(SessionIdCodec.claimedReplicaOf(id)).toBe('executor-1');
    expect(SessionIdCodec.claimedReplicaOf('garbage')).toBeUndefined();
    expect(SessionIdCodec.claimedReplicaOf('x-abc.ZXhlY3V0b3ItMQ.sig')).toBeUndefined();
  });
  it('never repeats an id', () => {
    const codec = new SessionIdCodec('r');
    const ids = new Set(Array.from({ length: 1000 }, () => codec.mint()));
    expect(ids.size).toBe(1000);
  });
});
