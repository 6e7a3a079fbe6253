import type { IncomingMessage } from 'node:http';
import { callerContext, failSpan, inSpan, SpanKind } from '@stoa/activity';
import type { RpcBody } from './fast-path';
import type { UpstreamPool } from './upstream-pool';

/**
 * One tool call a connector answers before Nest (its fast paths): a server span named by the MCP semantic
 * conventions, child of the caller's `_meta` or HTTP traceparent, and the call counted by tool and outcome.
 * `run` resolves with whether the answer was an error; a throw counts as one.
 */
export function observedToolCall(
  pool: UpstreamPool,
  req: IncomingMessage,
  body: RpcBody,
  run: () => Promise<{ isError: boolean }>,
): Promise<{ isError: boolean }> {
  const tool = body.params?.name ?? '';
  const started = performance.now();
  const count = (isError: boolean) =>
    pool.metrics?.observeToolCall(tool, isError ? 'error' : 'ok', (performance.now() - started) / 1000);
  return inSpan(
    `tools/call ${tool}`,
    {
      kind: SpanKind.SERVER,
      parent: callerContext(body.params?._meta as Record<string, unknown> | undefined, req.headers),
      attributes: {
        'mcp.method.name': 'tools/call',
        'gen_ai.tool.name': tool,
        'gen_ai.operation.name': 'execute_tool',
        'mcp.protocol.version': String(req.headers['mcp-protocol-version'] ?? ''),
        ...(body.id !== undefined && body.id !== null ? { 'jsonrpc.request.id': String(body.id) } : {}),
      },
    },
    async (span) => {
      try {
        const r = await run();
        if (r.isError) failSpan(span, 'tool_error');
        count(r.isError);
        return r;
      } catch (err) {
        count(true);
        throw err;
      }
    },
  );
}

/** A forwarded 2026-07-28 body with the hop's trace context in `params._meta` (only while tracing). */
export function withTraceMeta(body: Buffer | string, trace: Record<string, string>): string {
  const msg = JSON.parse(body.toString()) as { params?: { _meta?: Record<string, unknown> } };
  msg.params = { ...msg.params, _meta: { ...msg.params?._meta, ...trace } };
  return JSON.stringify(msg);
}
