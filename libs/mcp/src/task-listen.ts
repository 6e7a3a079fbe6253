import type { ServerResponse } from 'node:http';
import type { Principal } from '@stoa/core';
import type { TaskBackend, TaskView } from './mcp.types';
import type { McpRequest } from './endpoint-parts';
import { declaredCapabilities, TASKS_EXTENSION, withTasksExtension } from './tasks';
import { taskWire } from './tool-result';
import { isTerminalTask, taskChangeKey, watchTask } from './task-watch';

const REVISION = '2026-07-28';
const SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';
const SERVER_INFO = 'io.modelcontextprotocol/serverInfo';
/** Most tasks one stream watches (the acknowledgement lists the ones agreed to). */
const MAX_TASKS = 100;
const KEEP_ALIVE_MS = 15_000;

/** A 2026-07-28 `subscriptions/listen` asking for `notifications/tasks` of some tasks. */
export interface TaskListenRequest {
  id: string | number;
  taskIds: string[];
  /** The request declared the Tasks extension (required to ask for task notifications). */
  declaresTasks: boolean;
}

const isPlain = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The request as a task subscription when it is a consistent 2026-07-28 `subscriptions/listen` whose filter has
 * `taskIds` (the Tasks extension's addition); undefined otherwise (the SDK serves every other listen).
 */
export function taskListenOf(req: McpRequest): TaskListenRequest | undefined {
  const body = req.body;
  if (req.method !== 'POST' || req.headers['mcp-method'] !== 'subscriptions/listen') return;
  if (req.headers['mcp-protocol-version'] !== REVISION || req.headers['mcp-session-id']) return;
  if (!isPlain(body) || body.jsonrpc !== '2.0' || body.method !== 'subscriptions/listen') return;
  const { id, params } = body;
  if ((typeof id !== 'string' && typeof id !== 'number') || !isPlain(params) || !isPlain(params._meta)) return;
  if (params._meta['io.modelcontextprotocol/protocolVersion'] !== REVISION || !isPlain(params.notifications)) return;
  const taskIds = params.notifications.taskIds;
  if (!Array.isArray(taskIds) || !taskIds.every((t) => typeof t === 'string')) return;
  return { id, taskIds, declaresTasks: withTasksExtension(declaredCapabilities(params._meta)) };
}

/**
 * `subscriptions/listen` streams of `notifications/tasks` (Tasks extension over SEP-2575). A stream watches only
 * tasks of its caller: the acknowledgement lists the requested ids the caller owns, and someone else's id is left
 * out exactly like an unknown one. Each notification is the task as tasks/get shows it; the current view follows
 * the acknowledgement (a task may have moved since its CreateTaskResult), and the stream ends gracefully once
 * every watched task has ended.
 */
export class TaskListens {
  private readonly open = new Set<ListenStream>();

  constructor(
    private readonly backend: TaskBackend,
    private readonly serverInfo: { name: string; version: string },
  ) {}

  async serve(listen: TaskListenRequest, res: ServerResponse, principal: Principal): Promise<void> {
    if (!listen.declaresTasks) return missingTasks(res, listen.id);
    const stream = new ListenStream(res, listen.id, this.serverInfo, () => this.open.delete(stream));
    this.open.add(stream);
    res.once('close', () => stream.end(false));
    const agreed: string[] = [];
    for (const taskId of [...new Set(listen.taskIds)].slice(0, MAX_TASKS)) {
      const stop = await watchTask(this.backend, principal, taskId, (task) => stream.task(task));
      if (!stop) continue;
      agreed.push(taskId);
      stream.track(taskId, stop);
    }
    stream.acknowledge(agreed);
  }

  /** Ends every stream with its graceful-close result (server shutdown). */
  closeAll(): void {
    for (const stream of [...this.open]) stream.end(true);
  }
}

/** One open stream: frames queue until the acknowledgement is out (it MUST come first). */
class ListenStream {
  private acked = false;
  private closed = false;
  private readonly queue: TaskView[] = [];
  private readonly watches = new Map<string, () => void>();
  private readonly sent = new Map<string, string>();
  private keepAlive: NodeJS.Timeout | undefined;

  constructor(
    private readonly res: ServerResponse,
    private readonly id: string | number,
    private readonly serverInfo: { name: string; version: string },
    private readonly onEnd: () => void,
  ) {}

  track(taskId: string, stop: () => void): void {
    if (this.closed) stop();
    else this.watches.set(taskId, stop);
  }

  task(view: TaskView): void {
    if (this.closed) return;
    if (this.acked) this.send(view);
    else this.queue.push(view);
  }

  acknowledge(taskIds: string[]): void {
    if (this.closed) return;
    this.res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    this.notify('notifications/subscriptions/acknowledged', { notifications: taskIds.length ? { taskIds } : {} });
    this.acked = true;
    for (const view of this.queue.splice(0)) this.send(view);
    if (!this.watches.size) return this.end(true);
    if (!this.closed) this.keepAlive = setInterval(() => this.res.write(': keepalive\n\n'), KEEP_ALIVE_MS);
  }

  end(graceful: boolean): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.keepAlive);
    for (const stop of this.watches.values()) stop();
    this.watches.clear();
    if (graceful && this.res.headersSent && this.res.writable) {
      const meta = { [SUBSCRIPTION_ID]: this.id, [SERVER_INFO]: this.serverInfo };
      this.frame({ jsonrpc: '2.0', id: this.id, result: { resultType: 'complete', _meta: meta } });
    }
    this.res.end();
    this.onEnd();
  }

  private send(view: TaskView): void {
    const key = taskChangeKey(view);
    if (this.sent.get(view.taskId) === key) return;
    this.sent.set(view.taskId, key);
    this.notify('notifications/tasks', taskWire(view));
    if (!isTerminalTask(view)) return;
    this.watches.get(view.taskId)?.();
    this.watches.delete(view.taskId);
    if (this.acked && !this.watches.size) this.end(true);
  }

  private notify(method: string, params: Record<string, unknown>): void {
    const meta = { ...(params._meta as Record<string, unknown> | undefined), [SUBSCRIPTION_ID]: this.id };
    this.frame({ jsonrpc: '2.0', method, params: { ...params, _meta: meta } });
  }

  private frame(message: unknown): void {
    this.res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  }
}

/** -32021: task notifications need the Tasks extension declared (HTTP 400, as the SDK answers it). */
function missingTasks(res: ServerResponse, id: string | number): void {
  const text = JSON.stringify({
    jsonrpc: '2.0',
    id,
    error: {
      code: -32021,
      message: `Missing required client capability: declare the ${TASKS_EXTENSION} extension in this request's _meta to receive notifications/tasks.`,
      data: { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
    },
  });
  res.writeHead(400, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
