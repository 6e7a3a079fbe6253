import { randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdirSync, openSync, closeSync, writeSync, unlinkSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * The no-op mode admin token: the configured one, or a random one written to `file` (0600, replaced on each
 * start) so the operator — and only users who can read that file — can call /admin/v1.
 */
export function noopAdminToken(configured: string | undefined, file: string): { token: string; file?: string } {
  if (configured) return { token: configured };
  const token = randomBytes(24).toString('base64url');
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  try {
    unlinkSync(file); // never write through a planted link or into someone else's file
  } catch {
    /* none yet */
  }
  const fd = openSync(file, 'wx', 0o600);
  try {
    writeSync(fd, `${token}\n`);
  } finally {
    closeSync(fd);
  }
  return { token, file };
}

/** Constant-time comparison of a presented token with the expected one. */
export function tokenMatches(presented: string | undefined, expected: string): boolean {
  if (!presented) return false;
  const a = Buffer.from(presented);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
