import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { type AppProcess, spawnApp } from './app-process';
import { DISPATCHER_MAIN, GATEWAY_MAIN, ROUTER_MAIN } from './paths';
import { freePort } from './ports';

/** A router, gateway or dispatcher process. */
export type RunningRouter = AppProcess;

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
  port?: number,
): Promise<RunningRouter> {
  return startConnector(DISPATCHER_MAIN, { name: 'pool', ...config }, env, port);
}

async function startConnector(
  main: string,
  config: Record<string, unknown>,
  env: Record<string, string>,
  port?: number,
): Promise<RunningRouter> {
  const dir = mkdtempSync(join(tmpdir(), 'stoa-connector-'));
  const configFile = join(dir, 'connector.yaml');
  writeFileSync(configFile, stringify(config));
  return spawnApp({ what: 'connector', main, configFile, port: port ?? (await freePort()), env });
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
