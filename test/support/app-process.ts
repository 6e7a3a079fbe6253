import { type ChildProcess, spawn } from 'node:child_process';
import { TEST_ADMIN_TOKEN } from './admin';

/** A built app (executor, router, gateway, dispatcher) running as a real process on a real port. */
export interface AppProcess {
  url: string;
  mcpUrl: string;
  port: number;
  proc: ChildProcess;
  logs: () => string;
  /** Sends `signal` and waits for exit; returns the exit code. */
  stop: (signal?: NodeJS.Signals) => Promise<number | null>;
}

export interface SpawnAppOptions {
  /** What the errors call the app ("executor", "connector"). */
  what: string;
  /** The built entry (dist/apps/<app>/main.js). */
  main?: string;
  configFile?: string;
  /** Node arguments instead of `<main> --config <file> --port <port>` (an embedding's own program). */
  argv?: string[];
  /** How long /health may take to answer (default 30 s). */
  readyTimeoutMs?: number;
  port: number;
  args?: string[];
  env?: Record<string, string>;
}

/** Starts `node <main> --config <file> --port <port>`; resolves once /health answers, fails with the logs otherwise. */
export async function spawnApp(o: SpawnAppOptions): Promise<AppProcess> {
  // BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof": profile every app a bench or test starts.
  const nodeArgs = process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const proc = spawn(
    process.execPath,
    [
      ...nodeArgs,
      ...(o.argv ?? [o.main ?? '', '--config', o.configFile ?? '', '--port', String(o.port), ...(o.args ?? [])]),
    ],
    {
      env: { ...process.env, LOG_LEVEL: 'warn', STOA_ADMIN_TOKEN: TEST_ADMIN_TOKEN, ...o.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let logs = '';
  proc.stdout?.on('data', (d: Buffer) => (logs += d.toString()));
  proc.stderr?.on('data', (d: Buffer) => (logs += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${o.port}`;
  const deadline = Date.now() + (o.readyTimeoutMs ?? 30_000);
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`${o.what} exited with ${proc.exitCode}:\n${logs}`);
    try {
      if ((await fetch(`${url}/health`)).ok) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) throw new Error(`${o.what} did not become healthy:\n${logs}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url,
    mcpUrl: `${url}/mcp`,
    port: o.port,
    proc,
    logs: () => logs,
    stop: async (signal = 'SIGTERM') => {
      if (proc.exitCode === null) proc.kill(signal);
      return exited;
    },
  };
}

/**
 * A suite's teardown: closes clients and stops processes one after another, in the order given (clients before
 * the servers they talk to); parts a failed beforeAll never made are undefined and passed over.
 */
export async function shutDown(
  ...parts: ({ close: () => Promise<unknown> } | { stop: () => Promise<unknown> } | undefined)[]
): Promise<void> {
  for (const p of parts) {
    if (p && 'close' in p) await p.close();
    else if (p) await p.stop();
  }
}
