import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { DISPATCHER_MAIN, GATEWAY_MAIN, ROUTER_MAIN } from './paths';
import { freePort } from './ports';
import { TEST_ADMIN_TOKEN } from './admin';

export interface RunningRouter {
  url: string;
  mcpUrl: string;
  port: number;
  proc: ChildProcess;
  logs: () => string;
  stop: (signal?: NodeJS.Signals) => Promise<number | null>;
}

/** Starts `node dist/apps/router/main.js` with a config on a free port; resolves once /health answers. */
export function startRouter(config: Record<string, unknown>, env: Record<string, string> = {}): Promise<RunningRouter> {
  return startConnector(ROUTER_MAIN, { name: 'lab', ...config }, env);
}

/** Starts `node dist/apps/gateway/main.js` (data dir in a temp dir unless given). */
export function startGateway(
  config: Record<string, unknown>,
  env: Record<string, string> = {},
): Promise<RunningRouter> {
  return startConnector(
    GATEWAY_MAIN,
    { name: 'gw', data_dir: mkdtempSync(join(tmpdir(), 'stoa-gw-data-')), ...config },
    env,
  );
}

/** Starts `node dist/apps/dispatcher/main.js`. */
export function startDispatcher(
  config: Record<string, unknown>,
  env: Record<string, string> = {},
): Promise<RunningRouter> {
  return startConnector(DISPATCHER_MAIN, { name: 'pool', ...config }, env);
}

async function startConnector(
  main: string,
  config: Record<string, unknown>,
  env: Record<string, string>,
): Promise<RunningRouter> {
  const dir = mkdtempSync(join(tmpdir(), 'stoa-connector-'));
  const port = await freePort();
  const file = join(dir, 'connector.yaml');
  writeFileSync(file, stringify(config));
  const proc = spawn(process.execPath, [main, '--config', file, '--port', String(port)], {
    env: { ...process.env, LOG_LEVEL: 'warn', STOA_ADMIN_TOKEN: TEST_ADMIN_TOKEN, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let logs = '';
  proc.stdout?.on('data', (d: Buffer) => (logs += d.toString()));
  proc.stderr?.on('data', (d: Buffer) => (logs += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`connector exited with ${proc.exitCode}:\n${logs}`);
    try {
      if ((await fetch(`${url}/health`)).ok) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) throw new Error(`connector did not become healthy:\n${logs}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url,
    mcpUrl: `${url}/mcp`,
    port,
    proc,
    logs: () => logs,
    stop: async (signal = 'SIGTERM') => {
      if (proc.exitCode === null) proc.kill(signal);
      return exited;
    },
  };
}

/** Polls `fn` until it returns a value (or the deadline passes, failing loudly with `what`). */
export async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
