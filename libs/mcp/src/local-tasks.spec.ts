import { describe, expect, it } from 'vitest';
import { ProtocolError } from '@modelcontextprotocol/server';
import type { Principal } from '@stoa/core';
import { LocalTasks } from './local-tasks';
import type { TaskRun, TaskView } from './mcp.types';

const alice = { id: 'alice', scopes: [] } as unknown as Principal;
const bob = { id: 'bob', scopes: [] } as unknown as Principal;
const ask = (message: string) => ({ method: 'elicitation/create', params: { message } }) as never;

/** Work that ends when the test says so (and exposes its run). */
function controlled() {
  let run!: TaskRun;
  let finish!: (text: string) => void;
  const done = new Promise<string>((resolve) => (finish = resolve));
  return { work: async (r: TaskRun) => ((run = r), { text: await done }), finish, run: () => run };
}

/** Polls `get` until the task leaves `status` (the work settles on a later microtask). */
async function until(tasks: LocalTasks, id: string, status: TaskView['status']): Promise<TaskView> {
  for (let i = 0; i < 100; i++) {
    const view = await tasks.get(alice, id);
    if (view?.status === status) return view;
    await new Promise((r) => setImmediate(r));
  }
  throw new Error(`task ${id} never became ${status}`);
}

describe('LocalTasks', () => {
  it('creates a working task readable at once, with ISO times, integer ttlMs and pollIntervalMs', async () => {
    const tasks = new LocalTasks({ ttlMs: 60_000, pollIntervalMs: 250 });
    const created = tasks.start(alice, controlled().work);
    expect(created).toMatchObject({ status: 'working', ttlMs: 60_000, pollIntervalMs: 250 });
    expect(created.createdAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(await tasks.get(alice, created.taskId)).toMatchObject({ taskId: created.taskId, status: 'working' });
  });

  it('completes with the work result, and a tool error stays a completed isError result', async () => {
    const tasks = new LocalTasks();
    const ok = tasks.start(alice, () => Promise.resolve({ text: 'done' }));
    const toolError = tasks.start(alice, () => Promise.resolve({ text: 'bad input', isError: true }));
    expect((await until(tasks, ok.taskId, 'completed')).result).toEqual({ text: 'done' });
    expect((await until(tasks, toolError.taskId, 'completed')).result).toEqual({ text: 'bad input', isError: true });
  });

  it('fails with the JSON-RPC error the work threw (-32603 for a plain error) and no result', async () => {
    const tasks = new LocalTasks();
    const plain = tasks.start(alice, () => Promise.reject(new Error('boom')));
    const protocol = tasks.start(alice, () => Promise.reject(new ProtocolError(-32002, 'gone')));
    const failed = await until(tasks, plain.taskId, 'failed');
    expect(failed.error).toEqual({ code: -32603, message: 'boom' });
    expect(failed.result).toBeUndefined();
    expect((await until(tasks, protocol.taskId, 'failed')).error).toMatchObject({ code: -32002 });
  });

  it("answers someone else's task id exactly like an unknown one, for get, update and cancel", async () => {
    const tasks = new LocalTasks();
    const { taskId } = tasks.start(alice, controlled().work);
    expect(await tasks.get(bob, taskId)).toBeUndefined();
    expect(await tasks.update(bob, taskId, {})).toBeUndefined();
    expect(await tasks.cancel(bob, taskId)).toBeUndefined();
    expect(await tasks.get(bob, 't_unknown')).toBeUndefined();
    expect((await tasks.get(alice, taskId))?.status).toBe('working');
  });

  it('parks in input_required with the pending requests and resumes once tasks/update answers them', async () => {
    const tasks = new LocalTasks();
    const { taskId } = tasks.start(alice, async (run) => {
      const answers = await run.input({ confirm: ask('Delete?') });
      return { text: JSON.stringify(answers) };
    });
    const parked = await until(tasks, taskId, 'input_required');
    expect(parked.inputRequests).toEqual({ confirm: ask('Delete?') });
    await tasks.update(alice, taskId, { confirm: { action: 'accept', content: { confirm: true } } });
    const done = await until(tasks, taskId, 'completed');
    expect(JSON.parse(done.result!.text)).toEqual({ confirm: { action: 'accept', content: { confirm: true } } });
    expect(done.inputRequests).toBeUndefined();
  });

  it('keeps input_required with only the unanswered key after a partial update, ignoring unknown keys', async () => {
    const tasks = new LocalTasks();
    const { taskId } = tasks.start(alice, async (run) => {
      const [a, b] = await Promise.all([run.input({ first: ask('1?') }), run.input({ second: ask('2?') })]);
      return { text: `${JSON.stringify(a)} ${JSON.stringify(b)}` };
    });
    await until(tasks, taskId, 'input_required');
    const partial = await tasks.update(alice, taskId, { first: { action: 'accept' }, stray: { action: 'accept' } });
    expect(partial?.status).toBe('input_required');
    expect(Object.keys(partial?.inputRequests ?? {})).toEqual(['second']);
    await tasks.update(alice, taskId, { second: { action: 'decline' } });
    expect((await until(tasks, taskId, 'completed')).result?.text).toBe(
      '{"first":{"action":"accept"}} {"second":{"action":"decline"}}',
    );
  });

  it('cancels a running task: its signal aborts, it reads cancelled at once and its late result is dropped', async () => {
    const tasks = new LocalTasks();
    const job = controlled();
    const { taskId } = tasks.start(alice, job.work);
    expect((await tasks.cancel(alice, taskId))?.status).toBe('cancelled');
    expect(job.run().signal.aborted).toBe(true);
    job.finish('too late');
    await new Promise((r) => setImmediate(r));
    const after = await tasks.get(alice, taskId);
    expect(after?.status).toBe('cancelled');
    expect(after?.result).toBeUndefined();
  });

  it('acknowledges cancelling a finished task without changing it (idempotent)', async () => {
    const tasks = new LocalTasks();
    const { taskId } = tasks.start(alice, () => Promise.resolve({ text: 'done' }));
    await until(tasks, taskId, 'completed');
    expect(await tasks.cancel(alice, taskId)).toMatchObject({ status: 'completed', result: { text: 'done' } });
  });

  it('forgets a task after its ttlMs, cancelling it if it still runs', async () => {
    let now = 1_000_000;
    const tasks = new LocalTasks({ ttlMs: 1000, now: () => now });
    const job = controlled();
    const { taskId } = tasks.start(alice, job.work);
    now += 999;
    expect(await tasks.get(alice, taskId)).toBeDefined();
    now += 1;
    expect(await tasks.get(alice, taskId)).toBeUndefined();
    expect(job.run().signal.aborted).toBe(true);
  });

  it('refuses a new task when maxTasks live tasks are kept, saying what to do', () => {
    const tasks = new LocalTasks({ maxTasks: 1 });
    tasks.start(alice, controlled().work);
    expect(() => tasks.start(alice, controlled().work)).toThrow(/Too many tasks \(1\).*cancel finished ones/);
  });
});
