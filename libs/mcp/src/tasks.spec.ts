import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createMcpHandler, inputRequired, ProtocolError } from '@modelcontextprotocol/server';
import type { Principal } from '@stoa/core';
import { modernRequest } from '../../../test/support/modern-request';
import { McpEndpoint } from './mcp-endpoint';
import type { McpServerSpec, TaskBackend, TaskView } from './mcp.types';
import { TASKS_EXTENSION } from './tasks';

const alice = { id: 'alice', scopes: [] } as unknown as Principal;
const bob = { id: 'bob', scopes: [] } as unknown as Principal;
const WITH_TASKS = { extensions: { [TASKS_EXTENSION]: {} } };

/** A job backend with one working job of alice's, `j_1` (it takes no input, like JobTasks). */
const jobs: TaskBackend = {
  get: (p, id): Promise<TaskView | undefined> =>
    Promise.resolve(
      p.id === 'alice' && id === 'j_1'
        ? { taskId: 'j_1', status: 'working', createdAt: '', lastUpdatedAt: '', ttlMs: 1000 }
        : undefined,
    ),
  cancel: async (p, id) => jobs.get(p, id),
};

let ran: string[] = [];
const spec: McpServerSpec = {
  name: 'tasks-test',
  version: '0.0.0',
  tools: () => [],
  tasks: jobs,
  extend: (server, _era, kit) => {
    kit.requireTasks('only_task');
    kit.guard('guarded', (ctx) => {
      if (ctx.mcpReq.requestState() === 'bad') throw new ProtocolError(-32602, 'Invalid requestState');
    });
    server.registerTool('guarded', { inputSchema: z.object({}) }, () => {
      ran.push('guarded');
      return { content: [{ type: 'text', text: 'guarded ran' }] };
    });
    server.registerTool('maybe_task', { inputSchema: z.object({}) }, async (_a, ctx) =>
      kit.task(ctx, () => Promise.resolve({ text: 'maybe done' })),
    );
    server.registerTool('only_task', { inputSchema: z.object({}) }, async (_a, ctx) => {
      ran.push('only_task');
      return kit.task(ctx, () => Promise.resolve({ text: 'only done' }));
    });
    server.registerTool('confirm', { inputSchema: z.object({}) }, async (_a, ctx) =>
      kit.task(ctx, async (run) => {
        const answers = await run.input({ ok: inputRequired.elicit({ message: 'ok?', requestedSchema: okSchema }) });
        return { text: JSON.stringify(answers) };
      }),
    );
  },
};
const okSchema = z.object({ ok: z.boolean() });

const endpoint = new McpEndpoint(spec, { mintSessionId: () => 's', legacyIdleMs: 60_000 });
afterEach(() => void (ran = []));

/** One 2026-07-28 request as `caller`, through the SDK's own per-request handler; the JSON-RPC answer. */
async function rpc(caller: Principal, method: string, params: Record<string, unknown>, capabilities: object = {}) {
  const handler = createMcpHandler(() => endpoint.buildServer('modern', { principal: caller, connectionId: 'c' }), {
    legacy: 'reject',
  });
  const name = (params.name ?? params.taskId) as string | undefined;
  const request = modernRequest(method, params, {
    name,
    meta: {
      'io.modelcontextprotocol/clientInfo': { name: 'spec', version: '1' },
      'io.modelcontextprotocol/clientCapabilities': capabilities,
    },
  });
  const res = await handler.fetch(
    new Request('http://mcp.local/mcp', {
      method: 'POST',
      headers: request.headers,
      body: JSON.stringify(request.body),
    }),
  );
  const body = (await res.json()) as { result?: Record<string, unknown>; error?: { code: number; data?: unknown } };
  return body;
}

async function settled(caller: Principal, taskId: string): Promise<Record<string, unknown>> {
  for (let i = 0; i < 100; i++) {
    const { result } = await rpc(caller, 'tasks/get', { taskId }, WITH_TASKS);
    if (result && ['completed', 'failed', 'cancelled'].includes(result.status as string)) return result;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`task ${taskId} did not settle`);
}

describe('tools run as tasks through the extension kit', () => {
  it('answers a request that declared the Tasks extension with a task whose tasks/get inlines the result', async () => {
    const { result } = await rpc(alice, 'tools/call', { name: 'maybe_task', arguments: {} }, WITH_TASKS);
    expect(result).toMatchObject({ resultType: 'task', status: 'working' });
    const done = await settled(alice, result!.taskId as string);
    expect(done).toMatchObject({ status: 'completed', result: { content: [{ type: 'text', text: 'maybe done' }] } });
  });

  it('runs a task-supporting tool inline for a request without the extension', async () => {
    const { result } = await rpc(alice, 'tools/call', { name: 'maybe_task', arguments: {} });
    expect(result).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: 'maybe done' }] });
    expect(result).not.toHaveProperty('taskId');
  });

  it('answers -32021 naming the extension for a task-only tool without it, before the handler runs', async () => {
    const { error } = await rpc(alice, 'tools/call', { name: 'only_task', arguments: {} });
    expect(error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
    });
    expect(ran).toEqual([]);
    expect((await rpc(alice, 'tools/call', { name: 'only_task', arguments: {} }, WITH_TASKS)).result).toMatchObject({
      resultType: 'task',
    });
    expect(ran).toEqual(['only_task']);
  });

  it("answers a guard's ProtocolError as the call's JSON-RPC error, before the handler runs", async () => {
    const { error } = await rpc(alice, 'tools/call', { name: 'guarded', arguments: {}, requestState: 'bad' });
    expect(error).toMatchObject({ code: -32602, message: expect.stringContaining('Invalid requestState') });
    expect(ran).toEqual([]);
    const { result } = await rpc(alice, 'tools/call', { name: 'guarded', arguments: {}, requestState: 'good' });
    expect(result).toMatchObject({ content: [{ type: 'text', text: 'guarded ran' }] });
    expect(ran).toEqual(['guarded']);
  });

  it('delivers tasks/update inputResponses to a task in input_required and acks with an empty result', async () => {
    const created = await rpc(alice, 'tools/call', { name: 'confirm', arguments: {} }, WITH_TASKS);
    const taskId = created.result!.taskId as string;
    let parked = (await rpc(alice, 'tasks/get', { taskId }, WITH_TASKS)).result;
    for (let i = 0; parked?.status !== 'input_required' && i < 50; i++)
      parked = (await rpc(alice, 'tasks/get', { taskId }, WITH_TASKS)).result;
    expect(parked).toMatchObject({ inputRequests: { ok: { method: 'elicitation/create' } } });
    const ack = await rpc(alice, 'tasks/update', { taskId, inputResponses: { ok: { action: 'decline' } } }, WITH_TASKS);
    expect(Object.keys(ack.result ?? {}).sort()).toEqual(['_meta', 'resultType']);
    const done = await settled(alice, taskId);
    expect(done.result).toMatchObject({ content: [{ text: '{"ok":{"action":"decline"}}' }] });
  });

  it("answers someone else's local task exactly like an unknown id", async () => {
    const created = await rpc(alice, 'tools/call', { name: 'confirm', arguments: {} }, WITH_TASKS);
    const foreign = await rpc(bob, 'tasks/get', { taskId: created.result!.taskId }, WITH_TASKS);
    const unknown = await rpc(bob, 'tasks/get', { taskId: 't_unknown' }, WITH_TASKS);
    expect(foreign.error).toEqual({ ...unknown.error });
    expect(foreign.error?.code).toBe(-32602);
  });

  it('still serves the backend’s own tasks, which take no input', async () => {
    expect((await rpc(alice, 'tasks/get', { taskId: 'j_1' }, WITH_TASKS)).result).toMatchObject({ status: 'working' });
    const update = await rpc(alice, 'tasks/update', { taskId: 'j_1', inputResponses: {} }, WITH_TASKS);
    expect(update.error).toMatchObject({ code: -32602, message: expect.stringContaining('takes no input') });
    expect((await rpc(bob, 'tasks/get', { taskId: 'j_1' }, WITH_TASKS)).error?.code).toBe(-32602);
  });
});
