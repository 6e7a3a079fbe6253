/**
 * Startup provisioning and `--warm` (reference §10.4, §10.5): ensure the environment, then the
 * assets. The server runs it at start with `provisionAssets: auto_provision`; `--warm` runs it with
 * `provisionAssets: true`, prints `✓ Environment '{name}' is warm and ready.` and exits (sidecars
 * are not started by warm). The asset cache dir is the parent of the environment directory
 * (`{dataDir}/envs/{server}` by default, also for `system`); the server exports it to kernels
 * as MCP_ASSET_CACHE_DIR.
 */
import { dirname } from 'node:path';
import { provisionAssets, type AssetSpec, type ProvisionedAsset } from './assets';
import { ensureEnvironment, environmentDir, type EnsureEnvironmentOptions, type EnvironmentInfo } from './environment';

export interface PrepareEnvironmentOptions extends EnsureEnvironmentOptions {
  assets: readonly AssetSpec[];
  /** `auto_provision` at start; always true for `--warm`. */
  provisionAssets: boolean;
  retryBackoffMs?: number[];
}

export interface PreparedEnvironment extends EnvironmentInfo {
  assetCacheDir: string;
  /** Empty when assets were not provisioned. */
  assets: ProvisionedAsset[];
}

/** Ensures the kernel environment, then provisions the assets into the cache dir. */
export async function prepareEnvironment(opts: PrepareEnvironmentOptions): Promise<PreparedEnvironment> {
  const info = await ensureEnvironment(opts);
  const assetCacheDir = dirname(environmentDir(opts));
  const assets =
    opts.provisionAssets && opts.assets.length > 0
      ? await provisionAssets(opts.assets, {
          cacheDir: assetCacheDir,
          baseDir: opts.baseDir,
          retryBackoffMs: opts.retryBackoffMs,
          log: opts.log,
        })
      : [];
  return { ...info, assetCacheDir, assets };
}
