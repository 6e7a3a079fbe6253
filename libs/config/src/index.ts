/** One ConfigError listing every bad key. */
export { ConfigError } from './config.errors';
/** YAML + env + CLI overrides validated by zod; shared zod helpers for config schemas. */
export {
  boolish,
  checkConfig,
  loadConfig,
  nonNegative,
  parseConfig,
  positiveInt,
  type ConfigCheck,
  type EnvMap,
  type LoadConfigOptions,
  type LoadedConfig,
} from './config.loader';
/** The name rule of servers, upstreams, workers and peers (it becomes part of MCP tool names). */
export { serverName } from './server-name';
/** The command line every app shares (`--config`, `--host`, `--port`, …). */
export { parseCli, type CliArgs } from './cli';
