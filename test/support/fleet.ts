import { join } from 'node:path';
import { startExecutor, type RunningExecutor } from './executor-process';
import { ROOT } from './paths';
import { startDispatcher, startGateway, startRouter, type RunningRouter } from './router-process';

/** The four apps that serve `/mcp`. */
export type AppKind = 'executor' | 'router' | 'gateway' | 'dispatcher';
export const APP_KINDS: readonly AppKind[] = ['executor', 'router', 'gateway', 'dispatcher'];

/** One app of the fleet, as a test talks to it. */
export interface Target {
  kind: AppKind;
  url: string;
  mcpUrl: string;
  pid: number;
  logs: () => string;
}

/** A demo executor and a router, a gateway and a dispatcher in front of it (real processes, real ports). */
export interface Fleet {
  executor: RunningExecutor;
  targets: Target[];
  target: (kind: AppKind) => Target;
  stop: () => Promise<void>;
}

const DEMO = join(ROOT, 'examples', 'servers', 'demo');
const KEY = 'fleet-session-key-0123456789abcdef';
const passthrough = { mode: 'passthrough', audience: 'dev' };

export async function startFleet(executorConfig: Record<string, unknown> = {}): Promise<Fleet> {
  const executor = await startExecutor({
    config: {
      tools: { manifest: join(DEMO, 'tools.yaml') },
      skills: { dir: join(DEMO, 'skills') },
      sessions: { warm_pool: 1, replica: 'fleet-a', id_signing_key: KEY },
      ...executorConfig,
    },
  });
  const connectors: [AppKind, RunningRouter][] = [];
  try {
    // One after another: three Nest apps booting at once on a busy 2-core machine overrun the start deadline.
    connectors.push([
      'router',
      await startRouter({ upstreams: [{ name: 'demo', url: executor.mcpUrl, auth: passthrough }] }),
    ]);
    connectors.push([
      'gateway',
      await startGateway({ upstream: { name: 'demo', url: executor.mcpUrl, auth: passthrough } }),
    ]);
    connectors.push([
      'dispatcher',
      await startDispatcher({
        workers: [{ name: 'w1', url: executor.url }],
        worker_auth: passthrough,
        session_key: KEY,
        health_check_interval: 1,
      }),
    ]);
  } catch (err) {
    await executor.stop();
    throw err;
  }
  const asTarget = (kind: AppKind, p: RunningExecutor | RunningRouter): Target => ({
    kind,
    url: p.url,
    mcpUrl: p.mcpUrl,
    pid: p.proc.pid!,
    logs: p.logs,
  });
  const targets = [asTarget('executor', executor), ...connectors.map(([kind, p]) => asTarget(kind, p))];
  return {
    executor,
    targets,
    target: (kind) => targets.find((t) => t.kind === kind)!,
    stop: async () => {
      await Promise.all(connectors.map(([, p]) => p.stop()));
      await executor.stop();
    },
  };
}
