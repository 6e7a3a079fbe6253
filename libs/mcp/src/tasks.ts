import {
  type CallToolResult,
  CLIENT_CAPABILITIES_META_KEY,
  ProtocolError,
  ProtocolErrorCode,
  type McpServer,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { Principal } from '@stoa/core';
import { type McpExtensionKit, type McpServerSpec, TaskCreated, type TaskBackend, type TaskView } from './mcp.types';
import type { LocalTasks } from './local-tasks';
import { taskWire, toToolResult } from './tool-result';
import { watchTask } from './task-watch';

/** The Tasks extension identifier (2026-07-28). */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** The request's principal (set by our auth middleware through `req.auth`). */
export function principalOf(ctx: ServerContext): Principal {
  const principal = ctx.http?.authInfo?.extra?.principal as Principal | undefined;
  if (!principal) throw new Error('no principal on the MCP request');
  return principal;
}

/** The capabilities a 2026-07-28 request declared in its `_meta` envelope (an empty set when absent or malformed). */
export function declaredCapabilities(envelope: unknown): Record<string, unknown> {
  const caps = isRecord(envelope) ? envelope[CLIENT_CAPABILITIES_META_KEY] : undefined;
  return isRecord(caps) ? caps : {};
}

/** Whether the declared capabilities include the Tasks extension. */
export function withTasksExtension(caps: Record<string, unknown>): boolean {
  return isRecord(caps.extensions) && caps.extensions[TASKS_EXTENSION] !== undefined;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Whether this 2026-07-28 request declared the Tasks extension (2025-era requests never do). */
export function declaresTasks(ctx: ServerContext): boolean {
  return withTasksExtension(declaredCapabilities(ctx.mcpReq.envelope));
}

/** -32021 Missing Required Client Capability, naming the Tasks extension as the spec's example does. */
function missingTasks(message: string): ProtocolError {
  return new ProtocolError(-32021, message, { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } });
}

function requireTasks(ctx: ServerContext): void {
  if (!declaresTasks(ctx))
    throw missingTasks(
      'Missing required client capability: declare the io.modelcontextprotocol/tasks extension to use tasks/*.',
    );
}

const notFound = () => new ProtocolError(ProtocolErrorCode.InvalidParams, 'Failed to retrieve task: Task not found');
const params = { params: z.object({ taskId: z.string() }) };

/**
 * `tasks/get`, `tasks/update` and `tasks/cancel` (the SDK has no runtime for the Tasks extension). Lookups are scoped to
 * the caller: someone else's task id is "not found", like an unknown one.
 */
export function registerTaskMethods(
  server: McpServer,
  backend: TaskBackend,
  caller: (ctx: ServerContext) => Principal,
): void {
  server.server.setRequestHandler('tasks/get', params, async ({ taskId }, ctx) => {
    requireTasks(ctx);
    const task = await backend.get(caller(ctx), taskId);
    if (!task) throw notFound();
    return taskWire(task);
  });
  // The SDK lifts params.inputResponses (an MRTR field) into ctx. The answer is an empty ack: the task's new state
  // is read with the next tasks/get.
  server.server.setRequestHandler('tasks/update', params, async ({ taskId }, ctx) => {
    requireTasks(ctx);
    const responses = ctx.mcpReq.inputResponses ?? {};
    if (!(await deliverInput(backend, caller(ctx), taskId, responses))) throw notFound();
    return {};
  });
  server.server.setRequestHandler('tasks/cancel', params, async ({ taskId }, ctx) => {
    requireTasks(ctx);
    if (!(await backend.cancel(caller(ctx), taskId))) throw notFound();
    return {};
  });
}

/** Input for a task of `backend`; a backend without update() takes none (jobs run to the end). */
async function deliverInput(
  backend: TaskBackend,
  principal: Principal,
  taskId: string,
  inputResponses: Record<string, unknown>,
): Promise<TaskView | undefined> {
  if (backend.update) return backend.update(principal, taskId, inputResponses);
  const task = await backend.get(principal, taskId);
  if (!task) return undefined;
  throw new ProtocolError(
    ProtocolErrorCode.InvalidParams,
    `Task ${taskId} is ${task.status}, not input_required: it takes no input. Poll it with tasks/get.`,
  );
}

/** The tasks of `local` and then of `other` as one backend (their ids never collide: each mints its own). */
export function chainTasks(local: TaskBackend, other: TaskBackend): TaskBackend {
  return {
    get: async (p, id) => (await local.get(p, id)) ?? other.get(p, id),
    cancel: async (p, id) => (await local.cancel(p, id)) ?? other.cancel(p, id),
    update: async (p, id, responses) => deliverInput((await local.get(p, id)) ? local : other, p, id, responses),
    watch: async (p, id, listener) => (await watchTask(local, p, id, listener)) ?? watchTask(other, p, id, listener),
  };
}

/**
 * Runs `spec.extend` on one server instance with its kit: tools answered as tasks of `local` (undefined when this
 * server does not serve the Tasks extension: they then run inline), and the gate for tools that only run as tasks.
 */
export function extendServer(
  server: McpServer,
  era: 'legacy' | 'modern',
  extend: NonNullable<McpServerSpec['extend']>,
  local: LocalTasks | undefined,
  caller: (ctx: ServerContext) => Principal,
): void {
  const guards = new Map<string, ((ctx: ServerContext) => void)[]>();
  const guard = (tool: string, check: (ctx: ServerContext) => void) =>
    guards.set(tool, [...(guards.get(tool) ?? []), check]);
  const kit: McpExtensionKit = {
    requireTasks: (...tools) => tools.forEach((t) => guard(t, (ctx) => requireTaskTool(t, ctx))),
    guard,
    task: async (ctx, work) => {
      if (local && declaresTasks(ctx)) return toToolResult(new TaskCreated(local.start(caller(ctx), work)));
      const noInput = () =>
        Promise.reject(new Error(`this call needs input: declare the ${TASKS_EXTENSION} extension`));
      const { text, isError } = await work({ signal: ctx.mcpReq.signal, input: noInput });
      return { content: [{ type: 'text', text }], ...(isError ? { isError } : {}) } satisfies CallToolResult;
    },
  };
  extend(server, era, kit);
  if (guards.size) guardTools(server, guards);
}

function requireTaskTool(name: string, ctx: ServerContext): void {
  if (!declaresTasks(ctx))
    throw missingTasks(
      `Tool ${name} runs only as a task: declare the ${TASKS_EXTENSION} extension in this request's client capabilities (_meta) and poll the task it returns with tasks/get.`,
    );
}

type Handler = (request: { params?: { name?: unknown } }, ctx: ServerContext) => Promise<unknown>;

/**
 * Wraps tools/call so that a guarded tool's checks run before its arguments are validated or its handler runs: a
 * check's throw (a ProtocolError such as -32021 or -32602) is the call's JSON-RPC error, where a throw from the
 * handler would become an isError tool result. Like withReadableErrors, it reaches the SDK's handler table: the SDK
 * has no public hook before a tool's handler.
 */
function guardTools(server: McpServer, guards: ReadonlyMap<string, readonly ((ctx: ServerContext) => void)[]>): void {
  const handlers = (server.server as unknown as { _requestHandlers: Map<string, Handler> })._requestHandlers;
  const inner = handlers.get('tools/call');
  if (!inner) return;
  handlers.set('tools/call', async (request, ctx) => {
    const name = request.params?.name;
    if (typeof name === 'string') for (const check of guards.get(name) ?? []) check(ctx);
    return inner(request, ctx);
  });
}
