/** One ConfigError listing every bad key. */
export { ConfigError } from './config.errors';
/** YAML + env + CLI overrides validated by zod; shared zod helpers for config schemas. */
export { boolish, loadConfig, nonNegative, positiveInt, type EnvMap, type LoadConfigOptions, type LoadedConfig } from './config.loader';
