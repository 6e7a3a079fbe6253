import { randomBytes } from 'node:crypto';
import { randomToken, sign, verifySignature } from '@stoa/core';

/**
 * Session ids: `s-{random}.{replica}.{sig}` — opaque, 120 random bits, carrying the owning replica
 * signed with a key shared by a pool, so a dispatcher can route without shared state.
 */
export class SessionIdCodec {
  private readonly key: Buffer;

  constructor(
    readonly replica: string,
    key?: string,
  ) {
    this.key = key ? Buffer.from(key) : randomBytes(32);
  }

  mint(): string {
    const body = `s-${randomToken(15)}.${Buffer.from(this.replica).toString('base64url')}`;
    return `${body}.${sign(this.key, body, 12)}`;
  }

  /** The replica named by a valid id, else undefined. */
  replicaOf(id: string): string | undefined {
    const parts = splitId(id);
    if (!parts || !verifySignature(this.key, `${parts.rand}.${parts.replica}`, parts.sig)) return undefined;
    return Buffer.from(parts.replica, 'base64url').toString();
  }

  /**
   * The replica an id claims, its signature unchecked: a routing hint for a dispatcher that does not hold the
   * pool's key (the owning executor still checks the id and the caller).
   */
  static claimedReplicaOf(id: string): string | undefined {
    const parts = splitId(id);
    return parts && Buffer.from(parts.replica, 'base64url').toString();
  }
}

function splitId(id: string): { rand: string; replica: string; sig: string } | undefined {
  const parts = id.split('.');
  if (parts.length !== 3 || !parts[0]?.startsWith('s-')) return undefined;
  const [rand, replica, sig] = parts as [string, string, string];
  return { rand, replica, sig };
}
