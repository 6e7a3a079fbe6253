import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** A random id `{prefix}{hex}` such as the reference's `j_` + 12 hex job ids. */
export function randomId(prefix: string, hexChars = 12): string {
  return (
    prefix +
    randomBytes(Math.ceil(hexChars / 2))
      .toString('hex')
      .slice(0, hexChars)
  );
}

/** A high-entropy opaque token (base64url, 128 bits by default). */
export function randomToken(bytes = 16): string {
  return randomBytes(bytes).toString('base64url');
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
