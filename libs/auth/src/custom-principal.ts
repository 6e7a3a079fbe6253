import type { IncomingMessage } from 'node:http';
import { tokenlessPrincipal, type Principal } from '@stoa/core';
import { UnauthenticatedError } from './auth.errors';

/** The identity a {@link CustomPrincipalResolver} establishes. */
export interface ResolvedIdentity {
  /** Stable id: sessions, jobs and artifacts belong to it (two callers with one id share them). */
  id: string;
  name?: string;
  roles?: readonly string[];
  scopes?: readonly string[];
}

/**
 * Identity from a request in addition to Entra ID and no-op auth (an internal gateway's header, an mTLS
 * certificate). Asked first on every guarded request; undefined hands the request to the configured auth mode.
 * Ownership checks do not change: a session answers only its owner, and someone else's id answers as unknown.
 */
export interface CustomPrincipalResolver {
  resolve(req: IncomingMessage): ResolvedIdentity | undefined | Promise<ResolvedIdentity | undefined>;
}

/** Injection token of an app's {@link CustomPrincipalResolver}. */
export const CUSTOM_PRINCIPAL_RESOLVER = Symbol('CUSTOM_PRINCIPAL_RESOLVER');

/** The resolver's answer as a frozen Principal (`source: 'custom'`); a failing resolver is a 401 that says so. */
export async function customPrincipal(
  resolver: CustomPrincipalResolver,
  req: IncomingMessage,
): Promise<Principal | undefined> {
  let who: ResolvedIdentity | undefined;
  try {
    who = await resolver.resolve(req);
  } catch (err) {
    throw new UnauthenticatedError(
      `The server's identity resolver could not establish who you are: ${(err as Error).message}. Check the credentials your client sends.`,
      true,
    );
  }
  if (!who) return undefined;
  if (typeof who.id !== 'string' || !who.id.trim())
    throw new UnauthenticatedError(
      "The server's identity resolver returned no id, so the request has no owner. Ask the server's operator to fix the resolver.",
      true,
    );
  return tokenlessPrincipal({
    id: who.id,
    name: who.name,
    roles: who.roles ?? [],
    scopes: who.scopes ?? [],
    source: 'custom',
  });
}
