import type { IncomingMessage, ServerResponse } from 'node:http';
import { Logger } from '@nestjs/common';
import type { PrincipalResolver } from '@stoa/auth';
import { isAppError, type Principal } from '@stoa/core';
import { declaredCapabilities, envelopeRefusal, isStatelessMcpPost, taskListenOf } from '@stoa/mcp';
import { observedToolCall } from './observed-call';
import { listenFailed, relayListen } from './task-listen-relay';
import { stringOf } from './tool-called';
import type { Upstream } from './upstream';
import type { UpstreamPool } from './upstream-pool';

type RawRequest = IncomingMessage & { body?: unknown; rawBody?: Buffer; principal?: Principal };
/** The JSON-RPC envelope of a forwarded request (as much as the fast path reads). */
export interface RpcBody {
  id?: string | number | null;
  params?: { name?: string; taskId?: string; arguments?: Record<string, unknown> } & Record<string, unknown>;
}

/** How one forwarded tool call ended, for hooks (audit). */
export interface ForwardOutcome {
  /** The upstream answered with a tool result flagged isError (or an HTTP/JSON-RPC failure). */
  isError: boolean;
  /** The request could not be completed (network, credentials). */
  failed?: string;
  bytesIn: number;
  bytesOut: number;
  durationMs: number;
  /** session_id of the result (execute calls), when present. */
  sessionId?: string;
}

/** Per-connector policy around the fast path (the gateway's policy, rate limits and audit). */
export interface FastPathHooks {
  /** A tool error message to answer with instead of forwarding (denied, rate limited), or undefined to go on. */
  before?: (
    principal: Principal,
    tool: string,
    body: RpcBody,
    bytesIn: number,
  ) => Promise<{ message: string; extra?: Record<string, unknown> } | undefined>;
  /** Extra headers for the upstream request (e.g. the function policy executors enforce in kernels). */
  headers?: Record<string, string>;
  after?: (principal: Principal, tool: string, body: RpcBody, outcome: ForwardOutcome) => void;
}

const logger = new Logger('ConnectorFastPath');
/** Task methods relayed to the upstream that knows the task. */
const isTaskMethod = (m: unknown): m is string => m === 'tasks/get' || m === 'tasks/update' || m === 'tasks/cancel';

/**
 * Ahead of a connector's `/mcp` endpoint (router, gateway; `before` in mcpFrontDoor): a 2026-07-28 `tools/call` of
 * an upstream tool is streamed straight to that upstream (no SDK parse, validate and re-serialise on this hop; progress and
 * cancellation travel with the stream), and `tasks/get`/`tasks/update`/`tasks/cancel` go to the upstream that
 * knows the task. Anything else — and any request whose caller cannot be authenticated here, or whose `Mcp-Name`
 * does not match its body — continues to the connector's SDK endpoint (the guarded route gives the 401 challenges;
 * the endpoint -32020).
 */
export function connectorFastPath(pool: UpstreamPool, principals: PrincipalResolver, hooks: FastPathHooks = {}) {
  const tasks = taskRelay(pool, principals);
  return (req: RawRequest, res: ServerResponse, next: () => void): void => {
    if (!isStatelessMcpPost(req)) return next();
    const method = req.headers['mcp-method'];
    if (method !== 'tools/call') return tasks(req, res, next);
    const body = req.body as RpcBody | undefined;
    if (envelopeRefusal(body)) return next(); // unbounded names / ids: the endpoint refuses them with the reason
    const name = req.headers['mcp-name'];
    const route = typeof name === 'string' && body?.params?.name === name ? pool.route(name)?.upstream : undefined;
    if (!route || route.era !== 'modern') return next(); // 2025-era upstreams get the caller's own MCP session
    asCaller(principals, req, next, (principal) =>
      observedToolCall(pool, req, body!, () => forward(pool, route, req, res, principal, body!, hooks)).catch(
        (err: Error) => fastPathFailed(res, body, err),
      ),
    );
  };
}

/**
 * Ahead of any connector's `/mcp` endpoint (`before` in mcpFrontDoor): a 2026-07-28 `tasks/get`/`tasks/update`/`tasks/cancel` whose
 * `Mcp-Name` names its task goes to the upstream that owns the task (asked in turn: task ids are unguessable, and
 * someone else's task answers "not found" upstream exactly like an unknown one), and so does a `subscriptions/listen`
 * for their notifications (relayListen). Anything else — and a caller who cannot be authenticated here — continues
 * to the connector's SDK endpoint.
 */
export function taskRelay(pool: UpstreamPool, principals: PrincipalResolver) {
  return (req: RawRequest, res: ServerResponse, next: () => void): void => {
    if (!isStatelessMcpPost(req)) return next();
    const method = req.headers['mcp-method'];
    const body = req.body as RpcBody | undefined;
    const listen = taskListenOf(req);
    if (listen)
      return asCaller(principals, req, next, (principal) =>
        relayListen(pool, req, res, principal, listen, declaredCapabilities(body?.params?._meta)).catch((err: Error) =>
          listenFailed(res, listen, err),
        ),
      );
    if (
      !isTaskMethod(method) ||
      envelopeRefusal(body) ||
      !body?.params?.taskId ||
      req.headers['mcp-name'] !== body.params.taskId
    )
      return next();
    asCaller(principals, req, next, (principal) =>
      relayTask(pool, method, res, principal, body).catch((err: Error) => fastPathFailed(res, body, err)),
    );
  };
}

/** Serves `req` as its authenticated caller (kept on the request for the access log); no caller: the Nest route. */
function asCaller(
  principals: PrincipalResolver,
  req: RawRequest,
  next: () => void,
  serve: (principal: Principal) => Promise<unknown>,
): void {
  void principals.tryResolve(req.headers.authorization, req).then((principal) => {
    if (!principal) return next();
    req.principal = principal;
    return serve(principal);
  }, next);
}

function fastPathFailed(res: ServerResponse, body: RpcBody | undefined, err: Error): void {
  logger.error({ err: err.message }, 'fast path failed');
  if (!res.headersSent)
    toolError(res, body?.id, `Connector error: ${err.message}. Retry; if it persists, report it to the operator.`);
}

async function forward(
  pool: UpstreamPool,
  upstream: Upstream,
  req: RawRequest,
  res: ServerResponse,
  principal: Principal,
  body: RpcBody,
  hooks: FastPathHooks,
): Promise<{ isError: boolean }> {
  const started = performance.now();
  const raw = req.rawBody ?? JSON.stringify(req.body);
  const bytesIn = Buffer.byteLength(raw);
  const tool = body.params?.name ?? '';
  const refusal = await hooks.before?.(principal, tool, body, bytesIn);
  if (refusal) {
    toolError(res, body.id, refusal.message, refusal.extra);
    return { isError: true };
  }
  const ac = new AbortController();
  res.once('close', () => res.writableFinished || ac.abort()); // the caller went away: cancel upstream
  try {
    const r = await pool.forward(upstream, principal, raw, req.headers, res, ac.signal, {
      headers: hooks.headers,
      sessionId: namedSession(body),
    });
    hooks.after?.(principal, tool, body, {
      isError: r.isError,
      bytesIn,
      bytesOut: r.bytesOut,
      durationMs: performance.now() - started,
      sessionId: r.refs.session_id,
    });
    return { isError: r.isError };
  } catch (err) {
    const failed = ac.signal.aborted ? 'cancelled by the caller' : (err as Error).message;
    hooks.after?.(principal, tool, body, {
      isError: true,
      failed,
      bytesIn,
      bytesOut: 0,
      durationMs: performance.now() - started,
    });
    if (ac.signal.aborted) return { isError: true };
    // Credential problems explain themselves (no token for OBO, an app-only caller…); anything else is the network.
    const message = isAppError(err)
      ? err.message
      : `Cannot reach upstream '${upstream.name}': ${(err as Error).message}. Retry; the connector reconnects on its own (see /health).`;
    if (!isAppError(err)) logger.warn({ upstream: upstream.name, err: (err as Error).message }, 'forward failed');
    if (!res.headersSent) toolError(res, body.id, message);
    else res.end();
    return { isError: true };
  }
}

/**
 * Tasks belong to one upstream; ask each healthy one until one knows the task (task ids are unguessable). An update
 * or cancel goes only to that one, found with tasks/get: the others would answer "not found", not its own answer.
 */
async function relayTask(
  pool: UpstreamPool,
  method: string,
  res: ServerResponse,
  principal: Principal,
  body: RpcBody,
): Promise<void> {
  const taskId = body.params?.taskId;
  let last: { code: number; message: string } = { code: -32602, message: `Task ${taskId} not found.` };
  for (const upstream of pool.upstreams().filter((u) => u.healthy && u.era === 'modern')) {
    try {
      const authorization = await pool.authorization(upstream, principal);
      // The caller's declared capabilities travel with the request: the upstream checks the Tasks extension.
      const opts = { authorization, name: taskId, clientCapabilities: declaredCapabilities(body.params?._meta) };
      const found = await upstream.http.rpc('tasks/get', { taskId }, opts);
      if (!found.result) {
        last = found.error ?? last;
        continue;
      }
      const r =
        method === 'tasks/get'
          ? found
          : await upstream.http.rpc(method, { taskId, inputResponses: body.params?.inputResponses }, opts);
      const answer = r.result ? { result: r.result } : { error: r.error ?? last };
      return json(res, { jsonrpc: '2.0', id: body.id ?? null, ...answer });
    } catch (err) {
      last = { code: -32603, message: `Upstream '${upstream.name}': ${(err as Error).message}` };
    }
  }
  json(res, { jsonrpc: '2.0', id: body.id ?? null, error: last });
}

/** The execution session a call names (`execution_session_id`), for its activity event. */
export function namedSession(body: RpcBody): string | undefined {
  return stringOf(body.params?.arguments?.execution_session_id);
}

function json(res: ServerResponse, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
  res.end(text);
}

function toolError(res: ServerResponse, id: RpcBody['id'], message: string, extra: Record<string, unknown> = {}): void {
  json(res, {
    jsonrpc: '2.0',
    id: id ?? null,
    result: {
      resultType: 'complete',
      content: [{ type: 'text', text: JSON.stringify({ success: false, error: message, ...extra }, null, 2) }],
      isError: true,
    },
  });
}
