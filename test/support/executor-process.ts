import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { EXECUTOR_MAIN } from './paths';
import { freePort } from './ports';
import { testSandbox } from './sandbox';
import { TEST_ADMIN_TOKEN } from './admin';

export interface ExecutorOptions {
  /** server.yaml content (merged over a minimal `name: demo` and the test sandbox, see testSandbox()). */
  config?: Record<string, unknown>;
  env?: Record<string, string>;
  /** Reuse a data dir (restart tests). */
  dataDir?: string;
  port?: number;
  args?: string[];
}

/** A real executor process on a real port. */
export interface RunningExecutor {
  url: string;
  mcpUrl: string;
  port: number;
  dataDir: string;
  proc: ChildProcess;
  logs: () => string;
  /** Sends `signal` and waits for exit; returns the exit code. */
  stop: (signal?: NodeJS.Signals) => Promise<number | null>;
}

/** Writes a config file and starts `node dist/apps/executor/main.js` on a free port; resolves once /health answers. */
export async function startExecutor(opts: ExecutorOptions = {}): Promise<RunningExecutor> {
  const dir = mkdtempSync(join(tmpdir(), 'stoa-e2e-'));
  const dataDir = opts.dataDir ?? join(dir, 'data');
  const port = opts.port ?? (await freePort());
  const configFile = join(dir, 'server.yaml');
  writeFileSync(configFile, stringify({ name: 'demo', data_dir: dataDir, sandbox: testSandbox(), ...opts.config }));
  const proc = spawn(
    process.execPath,
    [EXECUTOR_MAIN, '--config', configFile, '--port', String(port), ...(opts.args ?? [])],
    {
      env: { ...process.env, LOG_LEVEL: 'warn', STOA_ADMIN_TOKEN: TEST_ADMIN_TOKEN, ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let logs = '';
  proc.stdout?.on('data', (d: Buffer) => (logs += d.toString()));
  proc.stderr?.on('data', (d: Buffer) => (logs += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`executor exited with ${proc.exitCode}:\n${logs}`);
    try {
      const res = await fetch(`${url}/health`);
      if (res.ok) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) throw new Error(`executor did not become healthy:\n${logs}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url,
    mcpUrl: `${url}/mcp`,
    port,
    dataDir,
    proc,
    logs: () => logs,
    stop: async (signal = 'SIGTERM') => {
      if (proc.exitCode === null) proc.kill(signal);
      return exited;
    },
  };
}
