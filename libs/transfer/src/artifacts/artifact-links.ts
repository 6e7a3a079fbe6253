import { randomBytes } from 'node:crypto';
import { sign, verifySignature } from '@stoa/core';

const MAC_CHARS = 32;

/**
 * Signed, expiring download links `/artifacts/{session}/{expiry}.{mac}/{name}`. The MAC binds the session, its
 * owner, the artifact name and the expiry, so a link cannot be stretched to another file, session or time;
 * any link that fails verification answers like an unknown one (404).
 */
export class ArtifactLinks {
  private readonly key: Buffer;

  constructor(
    key: string | undefined,
    private readonly ttlMs: number,
    private readonly baseUrl: () => string,
  ) {
    this.key = key ? Buffer.from(key) : randomBytes(32);
  }

  /** A fresh link for `name` in the owner's session. */
  create(sessionId: string, owner: string, name: string, now = Date.now()): { url: string; expires_at: string } {
    const expiry = Math.ceil((now + this.ttlMs) / 1000);
    const token = `${expiry.toString(36)}.${sign(this.key, payload(sessionId, owner, name, expiry), MAC_CHARS)}`;
    const path = name.split('/').map(encodeURIComponent).join('/');
    return {
      url: `${this.baseUrl().replace(/\/+$/, '')}/artifacts/${encodeURIComponent(sessionId)}/${token}/${path}`,
      expires_at: new Date(expiry * 1000).toISOString(),
    };
  }

  /** True when `token` was made by {@link create} for exactly this session, owner and name and has not expired. */
  verify(sessionId: string, owner: string, name: string, token: string, now = Date.now()): boolean {
    const m = /^([0-9a-z]{1,12})\.([A-Za-z0-9_-]+)$/.exec(token);
    if (!m || m[2]!.length !== MAC_CHARS) return false;
    const expiry = parseInt(m[1]!, 36);
    if (!(expiry * 1000 > now)) return false;
    return verifySignature(this.key, payload(sessionId, owner, name, expiry), m[2]!);
  }
}

function payload(sessionId: string, owner: string, name: string, expiry: number): string {
  return ['artifact', sessionId, owner, name, String(expiry)].join('\0');
}
