import type { IncomingMessage } from 'node:http';
import { clip, kindOf } from '@stoa/core';

/** An answer given at /mcp before the SDK sees the request. */
export interface Refusal {
  status: number;
  code: number;
  message: string;
  id?: string | number | null;
  headers?: Record<string, string>;
}

/** HTTP methods `/mcp` serves: POST for messages, GET for a 2025-era event stream, DELETE to end one. */
export const MCP_HTTP_METHODS = 'GET, POST, DELETE';
/** Longest method name, tool/prompt name, task id or id accepted (tool names are 1–128 characters in MCP). */
export const MAX_NAME_CHARS = 128;
const MAX_URI_CHARS = 2048;
const MAX_CURSOR_CHARS = 4096;

/** The HTTP method or Content-Type `/mcp` cannot serve (405 / 415, saying what it accepts). */
export function transportRefusal(req: IncomingMessage): Refusal | undefined {
  const method = req.method ?? '';
  if (!MCP_HTTP_METHODS.split(', ').includes(method)) {
    return {
      status: 405,
      code: -32000,
      message: `Method Not Allowed: /mcp does not serve ${clip(method, 16)}. Send JSON-RPC messages with POST (GET opens a 2025-era event stream, DELETE ends a 2025-era session).`,
      headers: { allow: MCP_HTTP_METHODS },
    };
  }
  if (method !== 'POST') return undefined;
  const type = req.headers['content-type'];
  const media = (type ?? '').split(';')[0]!.trim().toLowerCase();
  if (media === 'application/json') return undefined;
  return {
    status: 415,
    code: -32000,
    message: `Unsupported Media Type: ${type ? `Content-Type '${clip(type, 60)}' is` : 'a body without Content-Type is'} not accepted. Send JSON-RPC messages as Content-Type: application/json.`,
    headers: { 'accept-post': 'application/json' },
  };
}

/**
 * Methods of the 2025 era that 2026-07-28 removed without a replacement served here (subscriptions/listen carries
 * task notifications only, not resource updates).
 */
const REMOVED_IN_2026 = new Set(['resources/subscribe', 'resources/unsubscribe']);

/**
 * A 2026-07-28 request (its `_meta` names a protocol version, no MCP session) for a method that revision removed:
 * 404 and -32601 as the spec requires, before the SDK (which would validate its params) or the envelope check.
 */
export function removedMethodRefusal(req: IncomingMessage, body: unknown): Refusal | undefined {
  if (req.method !== 'POST' || req.headers['mcp-session-id'] || !body || typeof body !== 'object') return undefined;
  const msg = body as { id?: unknown; method?: unknown; params?: { _meta?: Record<string, unknown> } };
  if (typeof msg.method !== 'string' || !REMOVED_IN_2026.has(msg.method)) return undefined;
  const version = msg.params?._meta?.['io.modelcontextprotocol/protocolVersion'];
  if (typeof version !== 'string') return undefined;
  return {
    status: 404,
    code: -32601,
    id: typeof msg.id === 'string' || typeof msg.id === 'number' ? msg.id : null,
    message: `Method not found: ${msg.method} is not part of MCP ${clip(version, 20)} (resource subscriptions were removed). Re-read the resource with resources/read, or subscribe over a 2025-11-25 session.`,
  };
}

/** Request fields that servers repeat in answers (and MCP headers mirror), per method, with their bounds. */
const ECHOED: Record<string, readonly (readonly [string, number])[]> = {
  'tools/call': [['name', MAX_NAME_CHARS]],
  'prompts/get': [['name', MAX_NAME_CHARS]],
  'resources/read': [['uri', MAX_URI_CHARS]],
  'resources/subscribe': [['uri', MAX_URI_CHARS]],
  'resources/unsubscribe': [['uri', MAX_URI_CHARS]],
  'tasks/get': [['taskId', MAX_NAME_CHARS]],
  'tasks/cancel': [['taskId', MAX_NAME_CHARS]],
  'tasks/result': [['taskId', MAX_NAME_CHARS]],
};

/**
 * A JSON-RPC message whose id, method or routing field (tool name, task id, URI, cursor) is not a bounded
 * string: refused with a one-line reason before anything repeats it (a 10 MB name would otherwise come back
 * twice) or mirrors it into a header. Other shapes are left to the SDK's validation.
 */
export function envelopeRefusal(body: unknown): Refusal | undefined {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const msg = body as { id?: unknown; method?: unknown; params?: unknown };
  if (typeof msg.id === 'string' && msg.id.length > MAX_NAME_CHARS) {
    return {
      status: 400,
      code: -32600,
      id: null,
      message: `Invalid Request: the JSON-RPC id is ${msg.id.length} characters long; use an id of at most ${MAX_NAME_CHARS} characters (or a number).`,
    };
  }
  const id = typeof msg.id === 'string' || typeof msg.id === 'number' ? msg.id : null;
  if (typeof msg.method !== 'string') return undefined;
  if (msg.method.length > MAX_NAME_CHARS) {
    return {
      status: 400,
      code: -32600,
      id,
      message: `Invalid Request: method '${clip(msg.method, 40)}' is not an MCP method (method names are at most ${MAX_NAME_CHARS} characters).`,
    };
  }
  const params = msg.params && typeof msg.params === 'object' ? (msg.params as Record<string, unknown>) : undefined;
  if (!params) return undefined;
  const fields: (readonly [string, number])[] = [...(ECHOED[msg.method] ?? [])];
  if (msg.method.endsWith('/list')) fields.push(['cursor', MAX_CURSOR_CHARS]);
  for (const [field, max] of fields) {
    const problem = fieldProblem(params[field], field, max, field === 'cursor');
    if (problem) return { status: 200, code: -32602, id, message: `Invalid params for ${msg.method}: ${problem}` };
  }
  return undefined;
}

function fieldProblem(value: unknown, field: string, max: number, optional: boolean): string | undefined {
  if (value === undefined && optional) return undefined;
  if (typeof value !== 'string') return `params.${field} must be a string, not ${kindOf(value)}. ${hint(field)}`;
  if (value.length > max)
    return `params.${field} is ${value.length} characters long (at most ${max}): '${clip(value, 40)}'. ${hint(field)}`;
  return undefined;
}

function hint(field: string): string {
  switch (field) {
    case 'name':
      return 'Call tools/list for the names this server offers.';
    case 'taskId':
      return 'Pass the taskId string a task-creating call returned.';
    case 'cursor':
      return 'Pass the nextCursor string of the previous page, or omit cursor for the first page.';
    default:
      return 'Fix the request and retry.';
  }
}

/** A request to `/mcp` (with or without a query string): what an app's front door takes (mcpFrontDoor). */
export function isMcpPath(req: IncomingMessage): boolean {
  return req.url === '/mcp' || req.url?.startsWith('/mcp?') === true;
}

/** A 2026-07-28 (sessionless) POST to `/mcp`: the only requests the connectors' fast paths take. */
export function isStatelessMcpPost(req: IncomingMessage): boolean {
  return (
    req.method === 'POST' && isMcpPath(req) && !req.headers['mcp-session-id'] && !!req.headers['mcp-protocol-version']
  );
}
