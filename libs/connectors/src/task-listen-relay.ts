import type { IncomingMessage, ServerResponse } from 'node:http';
import { Logger } from '@nestjs/common';
import type { Principal } from '@stoa/core';
import type { TaskListenRequest } from '@stoa/mcp';
import type { Upstream } from './upstream';
import type { UpstreamPool } from './upstream-pool';

const logger = new Logger('TaskListenRelay');

/**
 * A `subscriptions/listen` for task notifications goes to the upstream that owns the tasks (found with tasks/get as
 * the caller, so only the caller's own tasks count), its filter narrowed to those ids; the upstream's stream (its
 * acknowledgement, `notifications/tasks`, the graceful end) comes back unchanged, tagged with the caller's request
 * id. Tasks spread over several upstreams: the first that owns any gets the stream (the ack says which ids).
 * Nothing found, or no Tasks extension declared: the request goes as it is, and the upstream answers it.
 */
export async function relayListen(
  pool: UpstreamPool,
  req: IncomingMessage & { body?: unknown },
  res: ServerResponse,
  principal: Principal,
  listen: TaskListenRequest,
  clientCapabilities: Record<string, unknown>,
): Promise<void> {
  const body = req.body as { params?: Record<string, unknown> };
  const modern = pool.upstreams().filter((u) => u.healthy && u.era === 'modern');
  let target: { upstream: Upstream; taskIds: string[] } | undefined;
  for (const upstream of listen.declaresTasks ? modern : []) {
    const taskIds = await ownedTasks(pool, upstream, principal, clientCapabilities, listen.taskIds);
    if (!taskIds.length) continue;
    target = { upstream, taskIds };
    break;
  }
  const upstream = target?.upstream ?? modern[0];
  if (!upstream) return listenFailed(res, listen, new Error('no upstream is available'));
  const params = { ...body.params, notifications: { taskIds: target?.taskIds ?? listen.taskIds } };
  const ac = new AbortController();
  res.once('close', () => res.writableFinished || ac.abort()); // the caller went away: close the upstream stream
  const authorization = await pool.authorization(upstream, principal);
  await upstream.http
    .forward(JSON.stringify({ ...body, params }), req.headers, authorization, res, ac.signal)
    .catch((err: Error) => (ac.signal.aborted ? undefined : Promise.reject(err)));
}

/** Which of `taskIds` `upstream` knows as the caller's (tasks/get answers someone else's like an unknown one). */
async function ownedTasks(
  pool: UpstreamPool,
  upstream: Upstream,
  principal: Principal,
  clientCapabilities: Record<string, unknown>,
  taskIds: string[],
): Promise<string[]> {
  const opts = { authorization: await pool.authorization(upstream, principal), clientCapabilities };
  const owned: string[] = [];
  for (const taskId of taskIds.slice(0, 100)) {
    const found = await upstream.http.rpc('tasks/get', { taskId }, { ...opts, name: taskId }).catch(() => undefined);
    if (found?.result) owned.push(taskId);
  }
  return owned;
}

/** The listen could not be relayed: a JSON-RPC error, or the end of a stream already under way. */
export function listenFailed(res: ServerResponse, listen: TaskListenRequest, err: Error): void {
  logger.warn({ err: err.message }, 'task listen relay failed');
  if (res.headersSent) return void res.end();
  const message = `Connector error: ${err.message}. Poll the tasks with tasks/get, or retry the listen later.`;
  const text = JSON.stringify({ jsonrpc: '2.0', id: listen.id, error: { code: -32603, message } });
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
  res.end(text);
}
