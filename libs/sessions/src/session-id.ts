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
    const parts = id.split('.');
    if (parts.length !== 3 || !parts[0]?.startsWith('s-')) return undefined;
    const [rand, replica, sig] = parts as [string, string, string];
    if (!verifySignature(this.key, `${rand}.${replica}`, sig)) return undefined;
    return Buffer.from(replica, 'base64url').toString();
  }
}
