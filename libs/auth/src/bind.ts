import { isIP } from 'node:net';
import { StartupRefusedError } from '@stoa/core';

/** True for 127.0.0.0/8, ::1 and `localhost`. */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h === '::1') return true;
  return isIP(h) === 4 && h.startsWith('127.');
}

/** Message for refusing a non-loopback bind without real auth (names both ways to acknowledge it). */
export function unauthenticatedRemoteRefusal(host: string): string | undefined {
  if (isLoopback(host)) return undefined;
  return (
    `Refusing to listen on ${host}: authentication is in no-op (development) mode, so anyone who can reach this address ` +
    'could run code as any user. Configure Entra ID auth, bind to 127.0.0.1, or acknowledge the risk with ' +
    '--allow-unauthenticated-remote or STOA_ALLOW_UNAUTHENTICATED_REMOTE=1.'
  );
}

/** Refuses the start when no-op auth would listen beyond loopback without the acknowledgement. */
export function refuseOpenNoopBind(config: {
  server: { host: string; allow_unauthenticated_remote: boolean };
  auth: { mode: string };
}): void {
  if (config.auth.mode !== 'noop' || config.server.allow_unauthenticated_remote) return;
  const refusal = unauthenticatedRemoteRefusal(config.server.host);
  if (refusal) throw new StartupRefusedError(refusal);
}

/** Host names a bind address may be reached by (for DNS-rebinding checks). */
export function allowedHostsFor(bindHost: string, extra: readonly string[]): string[] | undefined {
  const wildcard = bindHost === '0.0.0.0' || bindHost === '::';
  if (wildcard && !extra.length) return undefined;
  const base = isLoopback(bindHost) || wildcard ? ['localhost', '127.0.0.1', '[::1]', '::1'] : [bindHost];
  return [...new Set([...base, ...extra])];
}
