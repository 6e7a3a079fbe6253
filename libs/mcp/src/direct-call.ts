import type { IncomingMessage } from 'node:http';
import { z } from 'zod';
import type { ToolDefinition } from './mcp.types';
import { TASKS_EXTENSION } from './tasks';

/** The 2026-07-28 protocol revision, the only one the direct path serves. */
const REVISION = '2026-07-28';
const PROTOCOL_VERSION = 'io.modelcontextprotocol/protocolVersion';
const CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
const CLIENT_INFO = 'io.modelcontextprotocol/clientInfo';
const SERVER_INFO = 'io.modelcontextprotocol/serverInfo';
/** `_meta` keys a direct call may carry: the envelope it needs, and trace context (read by the tool span). */
const PLAIN_META = new Set([PROTOCOL_VERSION, CLIENT_CAPABILITIES, CLIENT_INFO, 'traceparent', 'tracestate']);

/** A stateless `tools/call` the endpoint answers itself, its arguments already validated. */
export interface DirectCall {
  tool: ToolDefinition;
  args: unknown;
  id: string | number;
  meta: Record<string, unknown>;
}

const isPlain = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The common 2026-07-28 request — `tools/call` of one of the server's own tools, consistent headers, a plain
 * envelope, valid arguments — answered without the SDK's per-request server: no server built with every tool
 * registered, no message re-validation and re-encoding, no web `Request`/`Response` pair. Anything the SDK
 * answers differently is left to it: a progress token or log level (the answer would stream), the Tasks
 * extension, other `_meta` or params keys, header mismatches, proxied tools (their schema is the upstream's),
 * tools with `x-mcp-header` arguments (the SDK checks their headers),
 * arguments that fail validation (the SDK words that error). `undefined` means "serve it through the SDK".
 * The answer is the SDK's, field for field: `test/direct-call.e2e-spec.ts` compares the two paths.
 */
export function directCallOf(
  req: IncomingMessage & { body?: unknown },
  tools: () => readonly ToolDefinition[],
): DirectCall | undefined {
  const h = req.headers;
  if (h['mcp-method'] !== 'tools/call' || h['mcp-protocol-version'] !== REVISION || h['mcp-session-id']) return;
  if (!h['content-type']?.startsWith('application/json')) return;
  const accept = h.accept;
  if (!accept?.includes('application/json') || !accept.includes('text/event-stream')) return;
  const body = req.body;
  if (!isPlain(body) || body.jsonrpc !== '2.0' || body.method !== 'tools/call') return;
  const { id, params } = body;
  if ((typeof id !== 'string' && typeof id !== 'number') || !isPlain(params)) return;
  if (Object.keys(body).length !== 4) return; // jsonrpc, id, method, params and nothing else
  const { name, arguments: args, _meta: meta } = params;
  if (typeof name !== 'string' || h['mcp-name'] !== name || !isPlain(meta)) return;
  for (const key of Object.keys(params)) if (key !== 'name' && key !== 'arguments' && key !== '_meta') return;
  if (args !== undefined && !isPlain(args)) return;
  if (!plainEnvelope(meta)) return;
  const tool = tools().find((t) => t.name === name);
  if (!tool || tool.inputJsonSchema || declaresParamHeaders(tool)) return;
  const parsed = tool.input.safeParse(args ?? {});
  if (!parsed.success) return;
  return { tool, args: parsed.data, id, meta };
}

const paramHeaders = new WeakMap<ToolDefinition, boolean>();

/**
 * Whether a tool declares `x-mcp-header` arguments: the SDK checks their `Mcp-Param-*` headers against the body
 * and refuses a call without them, which is how a client learns to mirror them (it re-reads tools/list and retries).
 */
function declaresParamHeaders(tool: ToolDefinition): boolean {
  let hit = paramHeaders.get(tool);
  if (hit === undefined) {
    hit = JSON.stringify(z.toJSONSchema(tool.input, { unrepresentable: 'any' })).includes('"x-mcp-header"');
    paramHeaders.set(tool, hit);
  }
  return hit;
}

function plainEnvelope(meta: Record<string, unknown>): boolean {
  for (const key of Object.keys(meta)) {
    if (!PLAIN_META.has(key)) return false;
    if ((key === 'traceparent' || key === 'tracestate') && typeof meta[key] !== 'string') return false;
  }
  if (meta[PROTOCOL_VERSION] !== REVISION) return false;
  const caps = meta[CLIENT_CAPABILITIES];
  if (!isPlain(caps) || !Object.values(caps).every(isPlain)) return false;
  if (isPlain(caps.extensions) && caps.extensions[TASKS_EXTENSION] !== undefined) return false;
  const info = meta[CLIENT_INFO];
  if (info === undefined) return true;
  return isPlain(info) && typeof info.name === 'string' && typeof info.version === 'string';
}

/** A tool result as the SDK encodes it for 2026-07-28: `resultType` stamped and the server's identity in `_meta`. */
export function directAnswer(
  id: string | number,
  result: Record<string, unknown>,
  serverInfo: { name: string; version: string },
): string {
  const meta = isPlain(result._meta) ? result._meta : undefined;
  const sc = result.structuredContent;
  const content = result.content as { type: string }[] | undefined;
  // A non-object structuredContent is mirrored as text when no text block carries it (the SDK's projection).
  const fallback =
    sc !== undefined && !isPlain(sc) && !content?.some((c) => c.type === 'text')
      ? { content: [...(content ?? []), { type: 'text', text: JSON.stringify(sc) }] }
      : {};
  const wire = {
    ...result,
    ...fallback,
    resultType: result.resultType ?? 'complete',
    _meta: meta?.[SERVER_INFO] !== undefined ? meta : { ...meta, [SERVER_INFO]: serverInfo },
  };
  return JSON.stringify({ jsonrpc: '2.0', id, result: wire });
}
