/**
 * @stoa/provision: what a server needs before its kernels start — the Python environment
 * (system / venv / uv / conda), assets in a cache dir, and loopback sidecar services.
 */
/** `environment:` build keys (type, python, requirements, build_dir, auto_build, additional_commands). */
export { checkEnvironmentBuild, environmentBuildFields, type EnvironmentBuildConfig } from './environment';
/** Builds or reuses the kernel environment (system / venv / uv / conda). */
export { type EnsureEnvironmentOptions, type EnvironmentInfo } from './environment';
/** One `assets:` entry, and fetching / copying / verifying assets into the cache dir. */
export { assetSpecSchema, type AssetSpec, type ProvisionAssetsOptions, type ProvisionedAsset } from './assets';
/** Environment then assets: what the server runs at start and for `--warm`. */
export { prepareEnvironment, type PrepareEnvironmentOptions, type PreparedEnvironment } from './provision';
/** Sidecar config (one entry, and the list with unique names) and its base URL. */
export { sidecarListSchema, type SidecarSpec } from './sidecars';
/** Starts sidecars, waits for their health endpoints, stops their process groups. */
export { SidecarManager, type SidecarStartOptions } from './sidecars';
/** Provisioning errors. */
export {
  AssetProvisionError,
  EnvironmentBuildError,
  EnvironmentNotReadyError,
  SidecarStartError,
} from './provision.errors';
