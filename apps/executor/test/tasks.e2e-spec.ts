import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resultFromTaskOutcome } from '@modelcontextprotocol/ext-tasks/client';
import { startExecutor, type RunningExecutor } from '../../../test/support/executor-process';
import { listenForTasks, tasksSession } from '../../../test/support/tasks-client';
import { devToken, v2Client } from '../../../test/support/ts-clients';

describe('Tasks extension: long executions as MCP tasks (ext-tasks client)', () => {
  let ex: RunningExecutor;
  beforeAll(async () => {
    ex = await startExecutor({ config: { execution: { mode: 'adaptive', promotion_threshold_s: 0.5 } } });
  });
  afterAll(async () => {
    await ex?.stop();
  });

  it('answers a long run with a task that completes with the execute result', async () => {
    const { session, close } = await tasksSession(ex.mcpUrl, devToken('tasker'));
    try {
      const exec = await session.callTool('execute_demo_code', { code: "import time\ntime.sleep(1)\nprint('done')" });
      expect(exec.kind).toBe('task');
      const { outcome } = await exec.settle();
      expect(outcome.status).toBe('completed');
      const result = resultFromTaskOutcome(outcome) as { content: { text: string }[] };
      expect(JSON.parse(result.content[0]?.text ?? '{}')).toMatchObject({ stdout: 'done\n', success: true });
      const quick = await session.callTool('execute_demo_code', { code: '1 + 1' });
      expect(quick.kind).toBe('immediate');
    } finally {
      await close();
    }
  });

  it('cancels a task: the kernel is interrupted, the session stays usable and the job reads cancelled', async () => {
    const { session, close } = await tasksSession(ex.mcpUrl, devToken('tasker'));
    const c = await v2Client(ex.mcpUrl, 'auto', devToken('tasker'));
    try {
      const setup = await c.call('execute_demo_code', { code: 'keep = 1' });
      const exec = await session.callTool('execute_demo_code', {
        code: 'import time\ntime.sleep(30)',
        execution_session_id: setup.json.session_id as string,
      });
      expect(exec.kind).toBe('task');
      const taskId = exec.kind === 'task' ? exec.handle.taskId : '';
      await exec.cancel();
      expect((await exec.settle()).outcome.status).toBe('cancelled');
      expect((await c.call('demo_check_job', { job_id: taskId })).json.status).toBe('cancelled');
      let next = await c.call('execute_demo_code', { code: 'keep', execution_session_id: setup.json.session_id });
      for (let i = 0; i < 50 && next.json.stderr?.toString().startsWith('Session busy'); i++) {
        await new Promise((r) => setTimeout(r, 50));
        next = await c.call('execute_demo_code', { code: 'keep', execution_session_id: setup.json.session_id });
      }
      expect(next.json.stdout).toBe('1\n');
    } finally {
      await c.close();
      await close();
    }
  });

  it("treats someone else's task id like an unknown one", async () => {
    const owner = await tasksSession(ex.mcpUrl, devToken('owner'));
    const other = await tasksSession(ex.mcpUrl, devToken('other'));
    try {
      const exec = await owner.session.callTool('execute_demo_code', { code: 'import time\ntime.sleep(1.5)' });
      if (exec.kind !== 'task') throw new Error('expected a task');
      const taskId = exec.handle.taskId;
      type TaskId = typeof taskId;
      const err = await other.session
        .task(taskId)
        .snapshot()
        .then(
          () => undefined,
          (e: Error) => e.message,
        );
      const unknown = await other.session
        .task('j_000000000000' as unknown as TaskId)
        .snapshot()
        .then(
          () => undefined,
          (e: Error) => e.message,
        );
      expect(err).toBeDefined();
      expect(err?.replace(String(taskId), 'ID')).toBe(unknown?.replace('j_000000000000', 'ID'));
      await exec.settle();
    } finally {
      await owner.close();
      await other.close();
    }
  });

  it('tells the owner its task status on subscriptions/listen, and another user nothing of it', async () => {
    const { session, close } = await tasksSession(ex.mcpUrl, devToken('watcher'));
    try {
      const exec = await session.callTool('execute_demo_code', { code: "import time\ntime.sleep(1.5)\nprint('seen')" });
      if (exec.kind !== 'task') throw new Error('expected a task');
      const taskId = String(exec.handle.taskId);
      const stranger = listenForTasks(ex.mcpUrl, devToken('stranger'), [taskId]);
      const owner = await listenForTasks(ex.mcpUrl, devToken('watcher'), [taskId, 'j_000000000000']);
      const [ack, ...rest] = owner.messages;
      expect(ack).toMatchObject({
        method: 'notifications/subscriptions/acknowledged',
        params: { notifications: { taskIds: [taskId] } },
      });
      const told = rest.filter((m) => m.method === 'notifications/tasks').map((m) => m.params);
      expect(told.every((t) => t?.taskId === taskId)).toBe(true);
      expect(told.map((t) => t?.status)).toEqual([...told.slice(0, -1).map(() => 'working'), 'completed']);
      const result = told.at(-1)?.result as { content: { text: string }[] };
      expect(JSON.parse(result.content[0]?.text ?? '{}')).toMatchObject({ stdout: 'seen\n', success: true });
      expect(rest.at(-1)).toMatchObject({ id: 'listen-1', result: { resultType: 'complete' } });
      const other = await stranger;
      expect(other.messages.map((m) => m.method ?? 'end')).toEqual(['notifications/subscriptions/acknowledged', 'end']);
      expect(other.messages[0]?.params?.notifications).toEqual({});
    } finally {
      await close();
    }
  });

  it('still gives a plain client (no Tasks extension) the job handle', async () => {
    const c = await v2Client(ex.mcpUrl, 'auto');
    const r = await c.call('execute_demo_code', { code: 'import time\ntime.sleep(0.8)' });
    await c.close();
    expect(r.json).toMatchObject({ status: 'running', promoted: true, poll_tool: 'demo_check_job' });
  });
});
