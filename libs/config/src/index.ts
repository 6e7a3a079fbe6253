/** One ConfigError listing every bad key. */
export { ConfigError } from './config.errors';
/** YAML + env + CLI overrides validated by zod; shared zod helpers for config schemas. */
export {
  boolish,
  checkConfig,
  type ConfigDocument,
  type ConfigSource,
  dataDirField,
  loadConfig,
  nonNegative,
  parseConfig,
  positiveInt,
  readYaml,
  type ConfigCheck,
  type LoadConfigOptions,
  type LoadedConfig,
} from './config.loader';
/** Env overrides declared on schema fields with `meta({ env: 'NAME' })`. */
export { envMapOf, type EnvMap } from './env-names';
/** The name rule of servers, upstreams, workers and peers (it becomes part of MCP tool names). */
export { serverName } from './server-name';
/** The command line every app shares (`--config`, `--host`, `--port`, …). */
export { parseCli, type CliArgs } from './cli';
