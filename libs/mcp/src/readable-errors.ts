import { type McpServer, ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import { clip } from '@stoa/core';

type Handler = (request: unknown, ctx: unknown) => Promise<unknown>;
interface WrappingProtocol {
  _wrapHandler: (method: string, handler: Handler) => Handler;
  _requestHandlers: Map<string, Handler>;
}

/** Longest error message a protocol error carries back (reasons are one line; echoed input is clipped). */
const MAX_MESSAGE_CHARS = 500;

/**
 * Protocol errors an agent can act on. The SDK turns a request that fails its schema into `-32603` whose message
 * is the raw zod issue dump (or `-32602` with the dump appended); this makes every such failure `-32602` with a
 * one-line reason, and bounds every error message. Wraps the handlers registered so far (the constructor's
 * tools/*) and, through the SDK's per-handler wrapping hook, every one registered later, in both eras.
 */
export function withReadableErrors(server: McpServer): McpServer {
  const inner = server.server as unknown as WrappingProtocol;
  const guard =
    (method: string, handler: Handler): Handler =>
    async (request, ctx) => {
      try {
        return await handler(request, ctx);
      } catch (err) {
        throw readable(err, method);
      }
    };
  for (const [method, handler] of inner._requestHandlers) inner._requestHandlers.set(method, guard(method, handler));
  const wrap = inner._wrapHandler.bind(inner);
  inner._wrapHandler = (method, handler) => guard(method, wrap(method, handler));
  return server;
}

/** The error an agent sees for `err` thrown while serving `method`. */
export function readable(err: unknown, method: string): unknown {
  if (!(err instanceof Error)) return err;
  const code = (err as { code?: unknown }).code;
  const issues = zodIssues(err.message);
  if (
    issues &&
    (code === undefined || code === ProtocolErrorCode.InvalidParams || code === ProtocolErrorCode.InternalError)
  ) {
    return new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `Invalid params for ${method}: ${issues}. Fix these fields and retry.`,
    );
  }
  if (err.message.length > MAX_MESSAGE_CHARS && typeof code === 'number')
    return new ProtocolError(code, clip(err.message, MAX_MESSAGE_CHARS), (err as { data?: unknown }).data);
  return err;
}

/** `path: message; …` from a message that is (or ends with) a zod issue list, else undefined. */
function zodIssues(message: string): string | undefined {
  const start = message.indexOf('[');
  if (start < 0 || !message.trimEnd().endsWith(']')) return undefined;
  let list: unknown;
  try {
    list = JSON.parse(message.slice(start));
  } catch {
    return undefined;
  }
  if (!Array.isArray(list) || !list.length || !list.every((i) => i && typeof i === 'object' && 'message' in i))
    return undefined;
  return (list as { path?: unknown[]; message: unknown }[])
    .slice(0, 5)
    .map((i) => `${fieldPath(i.path)}: ${clip(String(i.message), 120)}`)
    .join('; ');
}

function fieldPath(path: unknown[] | undefined): string {
  const parts = (path ?? []).map((p) => clip(String(p), 40));
  if (!parts.length) return 'request';
  return parts[0] === 'params' ? `params.${parts.slice(1).join('.')}`.replace(/\.$/, '') : parts.join('.');
}
