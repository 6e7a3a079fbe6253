import { randomUUID } from 'node:crypto';
import { type InputRequest, ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import type { Principal } from '@stoa/core';
import type { TaskBackend, TaskListener, TaskOutcome, TaskRun, TaskView } from './mcp.types';

/** Limits of a {@link LocalTasks} store. */
export interface LocalTasksOptions {
  /** How long a task stays readable after it was created (its `ttlMs`). */
  ttlMs?: number;
  /** The poll interval suggested to clients. */
  pollIntervalMs?: number;
  /** Most tasks kept at once (expired ones are dropped first). */
  maxTasks?: number;
  now?: () => number;
}

interface Pending {
  request: InputRequest;
  resolve: (response: unknown) => void;
  reject: (err: Error) => void;
}

interface Entry {
  owner: string;
  view: TaskView;
  expiresAt: number;
  abort: AbortController;
  pending: Map<string, Pending>;
  /** subscriptions/listen streams of the owner watching this task. */
  watchers: Set<TaskListener>;
}

const TERMINAL: ReadonlySet<TaskView['status']> = new Set(['completed', 'failed', 'cancelled']);

/**
 * Tasks whose work runs in this process (tools an MCP extension registers, such as the conformance fixtures), kept
 * in memory for their TTL. Every lookup is scoped to the task's owner: someone else's task id reads as unknown.
 */
export class LocalTasks implements TaskBackend {
  private readonly tasks = new Map<string, Entry>();
  private readonly ttlMs: number;
  private readonly pollIntervalMs: number;
  private readonly maxTasks: number;
  private readonly now: () => number;

  constructor(opts: LocalTasksOptions = {}) {
    this.ttlMs = opts.ttlMs ?? 3_600_000;
    this.pollIntervalMs = opts.pollIntervalMs ?? 200;
    this.maxTasks = opts.maxTasks ?? 1000;
    this.now = opts.now ?? Date.now;
  }

  /** Creates a task for `principal` and starts `work`; the view returned is readable with get() at once. */
  start(principal: Principal, work: (run: TaskRun) => Promise<TaskOutcome>): TaskView {
    this.prune();
    if (this.tasks.size >= this.maxTasks)
      throw new ProtocolError(
        ProtocolErrorCode.InternalError,
        `Too many tasks (${this.maxTasks}) on this server: cancel finished ones or retry after ${this.ttlMs} ms.`,
      );
    const at = new Date(this.now()).toISOString();
    const entry: Entry = {
      owner: principal.id,
      view: {
        taskId: `t_${randomUUID()}`,
        status: 'working',
        createdAt: at,
        lastUpdatedAt: at,
        ttlMs: this.ttlMs,
        pollIntervalMs: this.pollIntervalMs,
      },
      expiresAt: this.now() + this.ttlMs,
      abort: new AbortController(),
      pending: new Map(),
      watchers: new Set(),
    };
    this.tasks.set(entry.view.taskId, entry);
    const created = { ...entry.view };
    const run: TaskRun = {
      signal: entry.abort.signal,
      input: (requests) => this.ask(entry, requests),
    };
    void work(run).then(
      (result) => this.settle(entry, { status: 'completed', result }),
      (err: unknown) => this.settle(entry, { status: 'failed', ...failure(err) }),
    );
    return created;
  }

  get(principal: Principal, taskId: string): Promise<TaskView | undefined> {
    const entry = this.find(principal, taskId);
    return Promise.resolve(entry && this.snapshot(entry));
  }

  /** Answers the pending input requests named in `inputResponses`; other keys are ignored. */
  update(principal: Principal, taskId: string, inputResponses: Record<string, unknown>): Promise<TaskView | undefined> {
    const entry = this.find(principal, taskId);
    if (!entry) return Promise.resolve(undefined);
    for (const [key, response] of Object.entries(inputResponses)) {
      const pending = entry.pending.get(key);
      if (!pending) continue;
      entry.pending.delete(key);
      pending.resolve(response);
    }
    if (entry.view.status === 'input_required' && !entry.pending.size) this.transition(entry, { status: 'working' });
    return Promise.resolve(this.snapshot(entry));
  }

  /** Cancels a running task (its signal aborts, its outcome is dropped); a finished task stays as it is. */
  cancel(principal: Principal, taskId: string): Promise<TaskView | undefined> {
    const entry = this.find(principal, taskId);
    if (!entry) return Promise.resolve(undefined);
    if (!TERMINAL.has(entry.view.status)) this.settle(entry, { status: 'cancelled', statusMessage: 'cancelled' });
    return Promise.resolve(this.snapshot(entry));
  }

  /** Tells `listener` the task's view now and after every transition (owner only: others get undefined). */
  watch(principal: Principal, taskId: string, listener: TaskListener): Promise<(() => void) | undefined> {
    const entry = this.find(principal, taskId);
    if (!entry) return Promise.resolve(undefined);
    entry.watchers.add(listener);
    listener(this.snapshot(entry));
    return Promise.resolve(() => void entry.watchers.delete(listener));
  }

  /** Cancels every running task (server shutdown). */
  close(): void {
    for (const entry of this.tasks.values())
      if (!TERMINAL.has(entry.view.status)) this.settle(entry, { status: 'cancelled', statusMessage: 'shutdown' });
    this.tasks.clear();
  }

  private ask(entry: Entry, requests: Record<string, InputRequest>): Promise<Record<string, unknown>> {
    if (TERMINAL.has(entry.view.status)) return Promise.reject(new Error(`task ${entry.view.taskId} has ended`));
    const keys = Object.keys(requests);
    const taken = keys.find((k) => entry.pending.has(k));
    if (taken) return Promise.reject(new Error(`input '${taken}' is already requested`));
    const answers = keys.map(
      (key) =>
        new Promise<[string, unknown]>((resolve, reject) =>
          entry.pending.set(key, {
            request: requests[key]!,
            resolve: (response) => resolve([key, response]),
            reject,
          }),
        ),
    );
    if (keys.length) this.transition(entry, { status: 'input_required' });
    return Promise.all(answers).then(Object.fromEntries);
  }

  private settle(entry: Entry, change: Partial<TaskView> & { status: TaskView['status'] }): void {
    if (TERMINAL.has(entry.view.status)) return; // cancelled first: the work's late outcome is dropped
    this.transition(entry, change);
    if (change.status === 'cancelled') entry.abort.abort(new Error('task cancelled'));
    for (const pending of entry.pending.values()) pending.reject(new Error(`task ${change.status}`));
    entry.pending.clear();
  }

  private transition(entry: Entry, change: Partial<TaskView> & { status: TaskView['status'] }): void {
    entry.view = { ...entry.view, ...change, lastUpdatedAt: new Date(this.now()).toISOString() };
    if (entry.watchers.size) for (const listener of [...entry.watchers]) listener(this.snapshot(entry));
  }

  private snapshot(entry: Entry): TaskView {
    const view = { ...entry.view };
    if (view.status === 'input_required')
      view.inputRequests = Object.fromEntries([...entry.pending].map(([key, p]) => [key, p.request]));
    return view;
  }

  private find(principal: Principal, taskId: string): Entry | undefined {
    this.prune();
    const entry = this.tasks.get(taskId);
    return entry?.owner === principal.id ? entry : undefined;
  }

  private prune(): void {
    const now = this.now();
    // Insertion order is creation order and every task has the same TTL: the first live one ends the sweep.
    for (const [id, entry] of this.tasks) {
      if (entry.expiresAt > now) break;
      this.settle(entry, { status: 'cancelled', statusMessage: 'expired' });
      this.tasks.delete(id);
    }
  }
}

/** A failed task's JSON-RPC error: a thrown protocol error keeps its code, anything else is -32603. */
function failure(err: unknown): Pick<TaskView, 'error' | 'statusMessage'> {
  const message = err instanceof Error ? err.message : String(err);
  const code = err instanceof ProtocolError ? err.code : ProtocolErrorCode.InternalError;
  const data = err instanceof ProtocolError ? (err as { data?: unknown }).data : undefined;
  return { statusMessage: message, error: { code, message, ...(data === undefined ? {} : { data }) } };
}
