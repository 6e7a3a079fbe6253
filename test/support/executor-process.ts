import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { type AppProcess, spawnApp } from './app-process';
import { EXECUTOR_MAIN } from './paths';
import { freePort } from './ports';
import { testSandbox } from './sandbox';

export interface ExecutorOptions {
  /**
   * server.yaml content (merged over a minimal `name: demo`, the test sandbox — see testSandbox() — and a
   * fixed-size warm pool, `sessions.warm_pool_max: 0`).
   */
  config?: Record<string, unknown>;
  env?: Record<string, string>;
  /** Reuse a data dir (restart tests). */
  dataDir?: string;
  port?: number;
  args?: string[];
}

/** A real executor process on a real port. */
export interface RunningExecutor extends AppProcess {
  dataDir: string;
}

/** Writes a config file and starts `node dist/apps/executor/main.js` on a free port; resolves once /health answers. */
export async function startExecutor(opts: ExecutorOptions = {}): Promise<RunningExecutor> {
  const dir = mkdtempSync(join(tmpdir(), 'stoa-e2e-'));
  const dataDir = opts.dataDir ?? join(dir, 'data');
  const port = opts.port ?? (await freePort());
  const configFile = join(dir, 'server.yaml');
  // A fixed-size warm pool unless a test asks for more: the many executors of the suite would otherwise each grow
  // their pool after their first few sessions and compete for the machine's two cores.
  const sessions = { warm_pool_max: 0, ...(opts.config?.sessions as Record<string, unknown> | undefined) };
  writeFileSync(
    configFile,
    stringify({ name: 'demo', data_dir: dataDir, sandbox: testSandbox(), ...opts.config, sessions }),
  );
  const app = await spawnApp({
    what: 'executor',
    main: EXECUTOR_MAIN,
    configFile,
    port,
    args: opts.args,
    env: opts.env,
  });
  return { ...app, dataDir };
}
