import {
  CLIENT_CAPABILITIES_META_KEY,
  ProtocolError,
  ProtocolErrorCode,
  type McpServer,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { Principal } from '@stoa/core';
import type { TaskBackend } from './mcp.types';
import { taskWire } from './tool-result';

/** The Tasks extension identifier (2026-07-28). */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** The request's principal (set by our auth middleware through `req.auth`). */
export function principalOf(ctx: ServerContext): Principal {
  const principal = ctx.http?.authInfo?.extra?.principal as Principal | undefined;
  if (!principal) throw new Error('no principal on the MCP request');
  return principal;
}

/** Whether this 2026-07-28 request declared the Tasks extension (2025-era requests never do). */
export function declaresTasks(ctx: ServerContext): boolean {
  const caps = (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY] as
    { extensions?: Record<string, unknown> } | undefined;
  return caps?.extensions?.[TASKS_EXTENSION] !== undefined;
}

function requireTasks(ctx: ServerContext): void {
  if (!declaresTasks(ctx)) {
    throw new ProtocolError(
      -32021,
      'Missing required client capability: declare the io.modelcontextprotocol/tasks extension to use tasks/*.',
      {
        requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
      },
    );
  }
}

const notFound = () => new ProtocolError(ProtocolErrorCode.InvalidParams, 'Failed to retrieve task: Task not found');
const params = { params: z.object({ taskId: z.string() }) };

/**
 * `tasks/get`, `tasks/update` and `tasks/cancel` (the SDK has no runtime for the Tasks extension). Lookups are scoped to
 * the caller: someone else's task id is "not found", like an unknown one.
 */
export function registerTaskMethods(server: McpServer, backend: TaskBackend): void {
  server.server.setRequestHandler('tasks/get', params, async ({ taskId }, ctx) => {
    requireTasks(ctx);
    const task = await backend.get(principalOf(ctx), taskId);
    if (!task) throw notFound();
    return taskWire(task);
  });
  // tasks/update delivers input to a task in input_required; ours never ask for input (jobs run to the end).
  server.server.setRequestHandler('tasks/update', params, async ({ taskId }, ctx) => {
    requireTasks(ctx);
    const task = await backend.get(principalOf(ctx), taskId);
    if (!task) throw notFound();
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `Task ${taskId} is ${task.status}, not input_required: it takes no input. Poll it with tasks/get.`,
    );
  });
  server.server.setRequestHandler('tasks/cancel', params, async ({ taskId }, ctx) => {
    requireTasks(ctx);
    if (!(await backend.cancel(principalOf(ctx), taskId))) throw notFound();
    return {};
  });
}
