import { ProtocolError } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { traceCarrier } from '@stoa/activity';
import { type Principal, UnavailableError } from '@stoa/core';
import type { Upstream } from './upstream';
import type { UpstreamPool } from './upstream-pool';
import { headerValue } from './upstream-pool';

const anyResult = z.looseObject({});
const TIMEOUT_MS = 30_000;

/**
 * One MCP request other than tools/call (resources/*, skills/*, prompts/*, completion/complete) to `upstream` for `principal`, with the credential
 * the pool derives for that caller; a 2025-era upstream gets it in the caller's own MCP session there. A JSON-RPC
 * error of the upstream is thrown as the same ProtocolError (code, message, data), so callers see the upstream's
 * answer unchanged; an unreachable upstream is an UnavailableError naming it.
 */
export async function upstreamRequest(
  pool: UpstreamPool,
  upstream: Upstream,
  principal: Principal,
  method: string,
  params: Record<string, unknown>,
  name?: string,
  /** The capabilities the caller declared (2026-07-28 upstreams check them before they ask for input). */
  clientCapabilities?: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  if (!upstream.healthy)
    throw new UnavailableError(`Upstream '${upstream.name}' is unavailable. Retry later; it reconnects on its own.`);
  const authorization = await pool.authorization(upstream, principal);
  const signal = AbortSignal.timeout(TIMEOUT_MS);
  if (upstream.era === 'legacy') {
    const key = upstream.legacyKey(principal, authorization);
    try {
      const client = await upstream.legacy.get(key, upstream.http.urls.mcp, authorization);
      return await client.request({ method, params } as never, anyResult, { signal, timeout: TIMEOUT_MS });
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (typeof code === 'number' && Number.isInteger(code))
        throw new ProtocolError(
          code,
          (err as Error).message.replace(/^MCP error -?\d+: /, ''),
          (err as { data?: unknown }).data,
        );
      upstream.legacy.drop(key);
      throw upstream.unreachable(err);
    }
  }
  let r;
  try {
    r = await upstream.http.rpc(method, params, {
      authorization,
      signal,
      name: name === undefined ? undefined : headerValue(name),
      headers: traceCarrier(),
      clientCapabilities,
    });
  } catch (err) {
    throw upstream.unreachable(err);
  }
  if (r.error) throw new ProtocolError(r.error.code, r.error.message, r.error.data);
  return r.result ?? {};
}
