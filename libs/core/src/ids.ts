import { createHmac, randomBytes, randomFillSync, timingSafeEqual } from 'node:crypto';

/**
 * Random bytes for ids, cut from a pool refilled 4 KiB at a time from the CSPRNG (as Node's own randomUUID does):
 * one system call per few hundred ids instead of one per id, which showed in profiles of hot paths (an audit row per
 * call). Every byte is handed out once and copied out.
 */
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;
function pooledRandom(n: number): Buffer {
  if (n > 256) return randomBytes(n);
  if (poolOffset + n > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const out = Buffer.from(pool.subarray(poolOffset, poolOffset + n));
  poolOffset += n;
  return out;
}

/** A random id `{prefix}{hex}` such as the reference's `j_` + 12 hex job ids. */
export function randomId(prefix: string, hexChars = 12): string {
  return (
    prefix +
    pooledRandom(Math.ceil(hexChars / 2))
      .toString('hex')
      .slice(0, hexChars)
  );
}

/** A high-entropy opaque token (base64url, 128 bits by default). */
export function randomToken(bytes = 16): string {
  return pooledRandom(bytes).toString('base64url');
}

/** HMAC-SHA256 (base64url, truncated) of `value` under `key`. */
export function sign(key: string | Buffer, value: string, chars = 16): string {
  return createHmac('sha256', key).update(value).digest('base64url').slice(0, chars);
}

/** Constant-time check of a signature made by {@link sign}. */
export function verifySignature(key: string | Buffer, value: string, signature: string): boolean {
  const expected = Buffer.from(sign(key, value, signature.length));
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
