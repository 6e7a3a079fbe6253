/** The parts of McpEndpoint that need no endpoint state: schemas of proxied tools, tool contexts, refusals. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  fromJsonSchema,
  type JsonSchemaType,
  LOG_LEVEL_META_KEY,
  type LoggingLevel,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { Principal } from '@stoa/core';
import type { ToolContext } from './mcp.types';
import { declaresTasks, principalOf } from './tasks';
import type { Refusal } from './request-guard';

/** The caller of a connection without HTTP auth (stdio): who it is, and an id for the connection. */
export interface FixedCaller {
  principal: Principal;
  connectionId: string;
}

/** A Node request after our auth middleware ran. */
export type McpRequest = IncomingMessage & { body?: unknown; auth?: unknown };

/** Arguments of proxied tools are validated by the upstream that owns the schema, not twice. */
const passThrough = {
  getValidator: () => (input: unknown) => ({ valid: true as const, data: input, errorMessage: undefined }),
};
const proxiedSchemas = new WeakMap<Record<string, unknown>, ReturnType<typeof fromJsonSchema>>();

export function proxiedSchema(schema: Record<string, unknown>): ReturnType<typeof fromJsonSchema> {
  let hit = proxiedSchemas.get(schema);
  if (!hit) {
    hit = fromJsonSchema(schema as JsonSchemaType, passThrough as never);
    proxiedSchemas.set(schema, hit);
  }
  return hit;
}

/**
 * `X-Stoa-Function-Policy: {"allowed": [...], "blocked": [...]}` — the gateway's domain-function policy. It can only
 * take functions away (the kernel proxies refuse what it blocks), so a caller setting it only restricts itself.
 */
export function functionPolicyOf(req: McpRequest): ToolContext['functionPolicy'] {
  const raw = req.headers['x-stoa-function-policy'];
  if (typeof raw !== 'string' || !raw) return undefined;
  try {
    const p = JSON.parse(raw) as { allowed?: unknown; blocked?: unknown };
    const list = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : undefined);
    return { allowed: list(p.allowed), blocked: list(p.blocked) };
  } catch {
    return { allowed: [] }; // unreadable policy: fail closed (no domain function allowed)
  }
}

export function toolContext(ctx: ServerContext, fixed?: FixedCaller): ToolContext {
  const principal = fixed?.principal ?? principalOf(ctx);
  const functionPolicy = (ctx.http?.authInfo?.extra as { functionPolicy?: ToolContext['functionPolicy'] } | undefined)
    ?.functionPolicy;
  const token = ctx.mcpReq._meta?.progressToken;
  const asked = (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[LOG_LEVEL_META_KEY] as
    LoggingLevel | undefined;
  return {
    principal,
    tasksSupported: declaresTasks(ctx),
    transportSessionId: ctx.sessionId ?? fixed?.connectionId,
    signal: ctx.mcpReq.signal,
    functionPolicy,
    log: (level, data, logger) => ctx.mcpReq.log(level, data, logger).catch(() => undefined),
    logLevel: asked ?? (ctx.sessionId || fixed ? 'debug' : undefined),
    progress:
      token === undefined
        ? undefined
        : (progress, message, total) =>
            ctx.mcpReq.notify({
              method: 'notifications/progress',
              params: { progressToken: token, progress, total, message },
            }),
  };
}

export function refuse(res: ServerResponse, r: Refusal): void {
  res.writeHead(r.status, { 'content-type': 'application/json', ...r.headers });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: r.code, message: r.message }, id: r.id ?? null }));
}
