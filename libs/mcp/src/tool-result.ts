import { Logger } from '@nestjs/common';
import { isAppError } from '@stoa/core';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { RawToolResult, TaskCreated, ToolFailure, type TaskView } from './mcp.types';
import type { McpResource } from './resources';
import { refsOfValue, withRefs } from './result-refs';

const logger = new Logger('McpTools');

/**
 * A handler's value as a tool result: strings stay text, everything else is JSON (indent 2) as the reference does;
 * a {@link ToolFailure} is the same JSON flagged `isError`. The value's session, job and batch ids also go in
 * `_meta` ({@link withRefs}) so connectors never parse the text.
 */
export function toToolResult(value: unknown): CallToolResult {
  if (value instanceof RawToolResult) return value.result as CallToolResult;
  if (value instanceof ToolFailure)
    return withRefs<CallToolResult>(
      { content: [{ type: 'text', text: JSON.stringify(value.body, null, 2) }], isError: true },
      refsOfValue(value.body),
    );
  if (value instanceof TaskCreated) return { resultType: 'task', ...taskWire(value.task) } as unknown as CallToolResult;
  const text = typeof value === 'string' ? value : JSON.stringify(value, null, 2);
  return withRefs<CallToolResult>({ content: [{ type: 'text', text }] }, refsOfValue(value));
}

/**
 * `result` with a `resource_link` content block per resource after its text (the reference's JSON stays the text
 * block, byte for byte; clients that know resources can read the files with resources/read).
 */
export function withResourceLinks(result: CallToolResult, links: readonly McpResource[] | undefined): CallToolResult {
  if (!links?.length || !Array.isArray(result.content)) return result;
  return { ...result, content: [...result.content, ...links.map((l) => ({ type: 'resource_link' as const, ...l }))] };
}

/**
 * An error as a tool result: the reference's `{"success": false, "error": …}` JSON (plus any contract
 * fields the error carries, e.g. the 429 payload), flagged `isError` so clients and models notice.
 */
export function errorToToolResult(err: unknown, tool: string): CallToolResult {
  if (isAppError(err)) {
    return {
      content: [
        { type: 'text', text: JSON.stringify({ success: false, ...err.details, error: err.message }, null, 2) },
      ],
      isError: true,
    };
  }
  logger.error({ tool, err: err instanceof Error ? err.stack : String(err) }, 'tool failed unexpectedly');
  const message = `Internal error in ${tool}: ${err instanceof Error ? err.message : String(err)}. Retry; if it persists, report it to the server operator.`;
  return {
    content: [{ type: 'text', text: JSON.stringify({ success: false, error: message }, null, 2) }],
    isError: true,
  };
}

/** A task on the wire (ext-tasks core/v2): a completed task's result is itself a complete tool result. */
export function taskWire(t: TaskView): Record<string, unknown> {
  const { result, ...rest } = t;
  return {
    ...rest,
    ...(result
      ? {
          result: {
            resultType: 'complete',
            content: [{ type: 'text', text: result.text }],
            ...(result.isError ? { isError: true } : {}),
          },
        }
      : {}),
  };
}
