import type { Principal } from '@stoa/core';
import type { TaskBackend, TaskListener, TaskView } from './mcp.types';

const TERMINAL: ReadonlySet<TaskView['status']> = new Set(['completed', 'failed', 'cancelled']);
/** Polling below this would hammer the backend (jobs are rows in a database). */
const MIN_POLL_MS = 100;

/** Whether a task has ended (no status follows). */
export function isTerminalTask(task: TaskView): boolean {
  return TERMINAL.has(task.status);
}

/** What makes two views of one task differ for a subscriber: status, update time, pending input keys. */
export function taskChangeKey(task: TaskView): string {
  return `${task.status}|${task.lastUpdatedAt}|${Object.keys(task.inputRequests ?? {}).join(',')}`;
}

/**
 * Watches a task of `principal`: the backend's own watch() when it has one, else get() polled at the task's poll
 * interval (`pollMs` when it suggests none), telling `listener` each changed view until the task ends. Undefined when
 * the caller has no such task (someone else's task reads as unknown, as with get()).
 */
export async function watchTask(
  backend: TaskBackend,
  principal: Principal,
  taskId: string,
  listener: TaskListener,
  pollMs = 500,
): Promise<(() => void) | undefined> {
  if (backend.watch) return backend.watch(principal, taskId, listener);
  const first = await backend.get(principal, taskId);
  if (!first) return undefined;
  listener(first);
  let last = taskChangeKey(first);
  let stopped = isTerminalTask(first);
  let timer: NodeJS.Timeout | undefined;
  const every = Math.max(MIN_POLL_MS, first.pollIntervalMs ?? pollMs);
  const tick = async (): Promise<void> => {
    // A failed read (database hiccup) is retried at the next tick; a task gone (expired) ends the watch.
    const now = await backend.get(principal, taskId).catch(() => null);
    if (stopped) return;
    if (now === undefined) return void (stopped = true);
    if (now && taskChangeKey(now) !== last) {
      last = taskChangeKey(now);
      listener(now);
    }
    if (now && isTerminalTask(now)) stopped = true;
    else timer = setTimeout(() => void tick(), every);
  };
  if (!stopped) timer = setTimeout(() => void tick(), every);
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
