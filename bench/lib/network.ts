import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startExecutor, type RunningExecutor } from '../../test/support/executor-process';
import { ROOT } from '../../test/support/paths';
import { startDispatcher, startGateway, startRouter, type RunningRouter } from '../../test/support/router-process';

export type Connector = 'router' | 'gateway' | 'dispatcher';

/**
 * The demo executor and a connector in front of it (no-op auth, caller identity passed through). The gateway
 * runs a policy (a blocked tool glob and a blocked domain function), a rate limit far above the load, and its
 * audit log on SQLite; the dispatcher has this one worker.
 */
export async function demoBehindRouter(
  kind: Connector = 'router',
): Promise<{ executor: RunningExecutor; router: RunningRouter; stop: () => Promise<void> }> {
  const dir = join(ROOT, 'examples', 'servers', 'demo');
  const executor = await startExecutor({
    config: {
      tools: { manifest: join(dir, 'tools.yaml') },
      skills: { dir: join(dir, 'skills') },
      sessions: { warm_pool: 1, max_sessions: 500 },
    },
  });
  const auth = { mode: 'passthrough', audience: 'dev' };
  const router =
    kind === 'router'
      ? await startRouter({ upstreams: [{ name: 'demo', url: executor.mcpUrl, auth }] })
      : kind === 'gateway'
        ? await startGateway({
            upstream: { name: 'demo', url: executor.mcpUrl, auth },
            policy: { blocked_tools: ['*_send'], blocked_functions: ['word_count'], max_calls_per_minute: 1_000_000 },
          })
        : await startDispatcher({ workers: [{ name: 'w1', url: executor.url }], worker_auth: auth });
  return {
    executor,
    router,
    stop: async () => {
      await router.stop();
      await executor.stop();
    },
  };
}

/** CPU seconds (user + system) a process has used so far, from /proc. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime in clock ticks (USER_HZ = 100)
}
