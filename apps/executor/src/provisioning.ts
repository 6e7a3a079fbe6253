import { mkdirSync } from 'node:fs';
import { buildKernelEnv } from '@stoa/kernel';
import { prepareEnvironment, SidecarManager, type PreparedEnvironment } from '@stoa/provision';
import type { ExecutorSettings } from './executor.config';

/** What start-up provisioning produced: the environment, and the sidecars to stop on shutdown. */
export interface Provisioned {
  prepared: PreparedEnvironment;
  sidecars: SidecarManager;
}

/**
 * Reference start-up order (§10.5): environment (+ assets) → sidecars → kernels. Fills `settings.runtime`
 * so the kernel service runs the built interpreter, can read the environment and asset cache inside its
 * sandbox, and exports MCP_ASSET_CACHE_DIR and each sidecar's URL variable to kernels.
 */
export async function provision(
  settings: ExecutorSettings,
  log: (msg: string) => void,
  opts: { warm: boolean },
): Promise<Provisioned> {
  const c = settings.config;
  const prepared = await prepareEnvironment({
    config: c.environment,
    serverName: c.name,
    dataDir: settings.dataDir,
    baseDir: settings.baseDir,
    log,
    assets: c.assets,
    provisionAssets: opts.warm || c.auto_provision,
    retryBackoffMs: backoff(process.env.STOA_ASSET_RETRY_BACKOFF_MS),
  });
  mkdirSync(prepared.assetCacheDir, { recursive: true }); // kernels are promised this directory, assets or not
  const sidecars = new SidecarManager(log);
  const urls =
    opts.warm || !c.sidecars.length
      ? {}
      : await sidecars.start(c.sidecars, {
          python: prepared.python,
          // Sidecars get the kernels' scrubbed variables, not the server's secrets.
          baseEnv: buildKernelEnv({
            host: process.env,
            pythonExecutable: prepared.python,
            passthrough: c.environment.passthrough_env,
            extra: c.environment.env,
            session: {},
          }),
          cwd: settings.baseDir,
        });
  settings.runtime = {
    python: prepared.python,
    readPaths: [prepared.prefix, prepared.assetCacheDir].filter((p): p is string => !!p),
    env: { MCP_ASSET_CACHE_DIR: prepared.assetCacheDir, ...urls },
  };
  return { prepared, sidecars };
}

/** STOA_ASSET_RETRY_BACKOFF_MS: one delay (ms) used between every attempt; default the reference's 2 s then 8 s. */
function backoff(raw: string | undefined): number[] | undefined {
  const ms = Number(raw);
  return raw && Number.isFinite(ms) && ms >= 0 ? [ms, ms] : undefined;
}
