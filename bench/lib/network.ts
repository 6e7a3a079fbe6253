import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startExecutor, type RunningExecutor } from '../../test/support/executor-process';
import { ROOT } from '../../test/support/paths';
import { startRouter, type RunningRouter } from '../../test/support/router-process';

/** The demo executor and a router in front of it (no-op auth, caller identity passed through). */
export async function demoBehindRouter(): Promise<{ executor: RunningExecutor; router: RunningRouter; stop: () => Promise<void> }> {
  const dir = join(ROOT, 'examples', 'servers', 'demo');
  const executor = await startExecutor({ config: { tools: { manifest: join(dir, 'tools.yaml') }, skills: { dir: join(dir, 'skills') }, sessions: { warm_pool: 1, max_sessions: 500 } } });
  const router = await startRouter({ upstreams: [{ name: 'demo', url: executor.mcpUrl, auth: { mode: 'passthrough', audience: 'dev' } }] });
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
