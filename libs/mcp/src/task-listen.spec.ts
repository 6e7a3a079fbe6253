import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { Principal } from '@stoa/core';
import { LocalTasks } from './local-tasks';
import type { McpRequest } from './endpoint-parts';
import { taskListenOf, TaskListens } from './task-listen';

const alice = { id: 'alice', scopes: [] } as unknown as Principal;
const bob = { id: 'bob', scopes: [] } as unknown as Principal;
const server = { name: 'test', version: '1' };
const SUB = 'io.modelcontextprotocol/subscriptionId';

/** A JSON-RPC message as the stream writes it (the fields these tests read). */
interface Message {
  jsonrpc: string;
  id?: string | number;
  method?: string;
  params?: {
    taskId?: string;
    status?: string;
    result?: unknown;
    notifications?: unknown;
    _meta?: Record<string, unknown>;
  };
  result?: { _meta?: Record<string, unknown> };
  error?: unknown;
}

/** A ServerResponse stand-in that keeps what was written, as JSON-RPC messages. */
class FakeResponse extends EventEmitter {
  status = 0;
  headersSent = false;
  writable = true;
  ended = false;
  text = '';
  writeHead(status: number) {
    this.status = status;
    this.headersSent = true;
    return this;
  }
  write(chunk: string) {
    this.text += chunk;
    return true;
  }
  end(chunk?: string) {
    if (chunk) this.text += chunk;
    this.ended = true;
    this.writable = false;
  }
  get messages(): Message[] {
    const data = this.text.split('\n').filter((l) => l.startsWith('data: '));
    return data.map((l) => JSON.parse(l.slice(6)) as Message);
  }
}

/** Work that ends when the test says so. */
function gate() {
  let open!: () => void;
  const done = new Promise<void>((r) => (open = r));
  return { work: async () => (await done, { text: 'done' }), open };
}

const settle = () => new Promise((r) => setImmediate(r));

describe('TaskListens', () => {
  it('acknowledges first, listing only the caller’s own task ids, then tells each status change', async () => {
    const tasks = new LocalTasks();
    const g = gate();
    const mine = tasks.start(alice, g.work);
    const theirs = tasks.start(bob, gate().work);
    const res = new FakeResponse();
    const listen = { id: 7, taskIds: [mine.taskId, theirs.taskId, 't_unknown'], declaresTasks: true };
    await new TaskListens(tasks, server).serve(listen, res as unknown as ServerResponse, alice);
    g.open();
    await settle();
    const [ack, ...rest] = res.messages;
    expect(ack).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: { notifications: { taskIds: [mine.taskId] }, _meta: { [SUB]: 7 } },
    });
    expect(rest.map((m) => [m.method, m.params?.taskId, m.params?.status])).toEqual([
      ['notifications/tasks', mine.taskId, 'working'],
      ['notifications/tasks', mine.taskId, 'completed'],
      [undefined, undefined, undefined],
    ]);
    expect(rest[1]?.params?.result).toMatchObject({ content: [{ type: 'text', text: 'done' }] });
    expect(rest.every((m) => m.params?._meta?.[SUB] === 7 || m.result?._meta?.[SUB] === 7)).toBe(true);
  });

  it('ends the stream gracefully with the listen result once every watched task has ended', async () => {
    const tasks = new LocalTasks();
    const done = tasks.start(alice, () => Promise.resolve({ text: 'quick' }));
    await settle();
    const res = new FakeResponse();
    await new TaskListens(tasks, server).serve(
      { id: 's', taskIds: [done.taskId], declaresTasks: true },
      res as never,
      alice,
    );
    expect(res.ended).toBe(true);
    expect(res.messages.at(-1)).toEqual({
      jsonrpc: '2.0',
      id: 's',
      result: { resultType: 'complete', _meta: { [SUB]: 's', 'io.modelcontextprotocol/serverInfo': server } },
    });
  });

  it('sends nothing of another principal’s task: an ack with no ids, then the graceful end', async () => {
    const tasks = new LocalTasks();
    const theirs = tasks.start(bob, () => Promise.resolve({ text: 'secret' }));
    const res = new FakeResponse();
    await new TaskListens(tasks, server).serve(
      { id: 1, taskIds: [theirs.taskId], declaresTasks: true },
      res as never,
      alice,
    );
    await settle();
    expect(res.messages.map((m) => m.method ?? 'result')).toEqual([
      'notifications/subscriptions/acknowledged',
      'result',
    ]);
    expect(res.messages[0]?.params?.notifications).toEqual({});
    expect(res.text).not.toContain('secret');
  });

  it('refuses task notifications without the Tasks extension: 400 and -32021', async () => {
    const res = new FakeResponse();
    await new TaskListens(new LocalTasks(), server).serve(
      { id: 2, taskIds: ['t_x'], declaresTasks: false },
      res as never,
      alice,
    );
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text)).toMatchObject({ id: 2, error: { code: -32021 } });
  });

  it('stops watching when the client goes away', async () => {
    const tasks = new LocalTasks();
    const g = gate();
    const mine = tasks.start(alice, g.work);
    const res = new FakeResponse();
    await new TaskListens(tasks, server).serve(
      { id: 3, taskIds: [mine.taskId], declaresTasks: true },
      res as never,
      alice,
    );
    res.emit('close');
    const written = res.text;
    g.open();
    await settle();
    expect(res.text).toBe(written);
  });
});

describe('taskListenOf', () => {
  const meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
  };
  const request = (notifications: unknown, headers: Record<string, string> = {}) =>
    ({
      method: 'POST',
      headers: { 'mcp-method': 'subscriptions/listen', 'mcp-protocol-version': '2026-07-28', ...headers },
      body: { jsonrpc: '2.0', id: 9, method: 'subscriptions/listen', params: { _meta: meta, notifications } },
    }) as unknown as McpRequest;

  it('takes a listen whose filter names task ids, noting the declared Tasks extension', () => {
    expect(taskListenOf(request({ taskIds: ['t_1'] }))).toEqual({ id: 9, taskIds: ['t_1'], declaresTasks: true });
  });

  it('leaves every other listen, and inconsistent headers, to the SDK', () => {
    expect(taskListenOf(request({ toolsListChanged: true }))).toBeUndefined();
    expect(taskListenOf(request({ taskIds: [1] }))).toBeUndefined();
    expect(taskListenOf(request({ taskIds: ['t_1'] }, { 'mcp-method': 'tools/call' }))).toBeUndefined();
  });
});
