/** A bearer header and when its token expires (epoch ms; undefined = unknown, not cached). */
export interface IssuedToken {
  header: string;
  expiresAt: number | undefined;
}

interface Entry {
  header: string;
  renewAt: number;
  expiresAt: number;
}

/**
 * Tokens by key, renewed `renewBeforeMs` before expiry. Concurrent misses for one key share one request;
 * when renewal fails, a token that is still valid for `graceMs` more is served instead of the error.
 */
export class TokenCache {
  private readonly entries = new Map<string, Entry>();
  private readonly pending = new Map<string, Promise<string>>();

  constructor(
    private readonly renewBeforeMs: number,
    private readonly graceMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  async get(key: string, issue: () => Promise<IssuedToken>): Promise<string> {
    const hit = this.entries.get(key);
    if (hit && this.now() < hit.renewAt) return hit.header;
    try {
      return await (this.pending.get(key) ?? this.start(key, issue));
    } catch (err) {
      if (hit && this.now() < hit.expiresAt - this.graceMs) return hit.header;
      throw err;
    }
  }

  private start(key: string, issue: () => Promise<IssuedToken>): Promise<string> {
    const running = issue()
      .then((t) => {
        if (t.expiresAt !== undefined) this.put(key, t.header, t.expiresAt);
        return t.header;
      })
      .finally(() => this.pending.delete(key));
    this.pending.set(key, running);
    return running;
  }

  private put(key: string, header: string, expiresAt: number): void {
    const now = this.now();
    // Callers come and go; drop what has expired so the map stays as large as the set of active users.
    for (const [k, e] of this.entries) if (e.expiresAt <= now) this.entries.delete(k);
    this.entries.set(key, { header, expiresAt, renewAt: expiresAt - this.renewBeforeMs });
  }
}
