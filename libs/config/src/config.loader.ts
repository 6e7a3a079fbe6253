import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { ConfigError } from './config.errors';
import { envMapOf, type EnvMap } from './env-names';
import { unknownKeyProblems } from './unknown-keys';

/** A config given in code instead of a YAML file: the same document, validated by the same schema. */
export interface ConfigDocument {
  document: Readonly<Record<string, unknown>>;
  /** Where relative paths in the document resolve (a YAML file's directory); default: the working directory. */
  baseDir?: string;
}

/** A YAML file path, a config object, or nothing (defaults and env only). */
export type ConfigSource = string | ConfigDocument | undefined;

export interface LoadConfigOptions<S extends z.ZodType> {
  schema: S;
  /** YAML file to read, or a config object; omitted → only defaults and env. */
  file?: ConfigSource;
  env?: NodeJS.ProcessEnv;
  /** Env names beyond those the schema's fields declare with `meta({ env })` (e.g. an app-specific alias). */
  envMap?: EnvMap;
  /** Values applied last (e.g. CLI flags), as dotted paths. */
  overrides?: Readonly<Record<string, unknown>>;
  /** Structural env rules (e.g. `UPSTREAM_<NAME>_URL` lists), applied to the raw document before `envMap`. */
  prepare?: (raw: Record<string, unknown>, env: NodeJS.ProcessEnv) => void;
}

export interface LoadedConfig<T> {
  config: T;
  /** Directory of the config file (relative paths in the file resolve against it), else cwd. */
  baseDir: string;
}

/** Reads YAML + env + overrides and validates them; throws one ConfigError naming every bad key (unknown ones too). */
export function loadConfig<S extends z.ZodType>(options: LoadConfigOptions<S>): LoadedConfig<z.output<S>> {
  const file = options.file;
  const source = typeof file === 'string' ? file : file ? '(config object)' : '(defaults and environment)';
  const raw = typeof file === 'string' ? readYaml(file) : file ? structuredClone(file.document) : {};
  const env = options.env ?? process.env;
  options.prepare?.(raw, env);
  const envSources = new Map<string, string>();
  for (const [name, path] of Object.entries({ ...envMapOf(options.schema), ...options.envMap })) {
    const value = env[name];
    if (value !== undefined && value !== '') {
      setPath(raw, path, value);
      envSources.set(path, name);
    }
  }
  for (const [path, value] of Object.entries(options.overrides ?? {})) {
    if (value !== undefined) setPath(raw, path, value);
  }
  const config = parseConfig(options.schema, raw, source, envSources);
  const baseDir =
    typeof file === 'string' ? dirname(resolve(file)) : file?.baseDir ? resolve(file.baseDir) : process.cwd();
  return { config, baseDir };
}

/**
 * Validates a raw document; throws one ConfigError naming every bad key, unknown keys with the nearest valid
 * name. `envSources` (dotted path → env variable) names the variable a bad value came from.
 */
export function parseConfig<S extends z.ZodType>(
  schema: S,
  raw: unknown,
  source: string,
  envSources: ReadonlyMap<string, string> = new Map(),
): z.output<S> {
  const checked = checkConfig(schema, raw, envSources);
  if (!checked.success) throw new ConfigError(source, checked.problems);
  return checked.data;
}

export type ConfigCheck<T> = { success: true; data: T } | { success: false; problems: string[] };

/** {@link parseConfig} without the throw: the parsed value, or one line per problem (`path: what is wrong`). */
export function checkConfig<S extends z.ZodType>(
  schema: S,
  raw: unknown,
  envSources: ReadonlyMap<string, string> = new Map(),
): ConfigCheck<z.output<S>> {
  const knownKeys = new Map<unknown, string[]>(); // the object that had unknown keys → its schema's keys
  const parsed = schema.safeParse(raw, {
    reportInput: true,
    error: (issue) => {
      if (issue.code === 'unrecognized_keys' && issue.inst instanceof z.core.$ZodObject) {
        knownKeys.set(issue.input, Object.keys(issue.inst._zod.def.shape));
      }
      return undefined; // zod's own message
    },
  });
  if (parsed.success) return { success: true, data: parsed.data };
  const problems = parsed.error.issues.flatMap(unwrapUnion).flatMap((issue) => {
    const key = issue.path.map(String).join('.');
    if (issue.code === 'unrecognized_keys')
      return unknownKeyProblems(key, issue.keys, knownKeys.get(issue.input) ?? []);
    const from = envSources.get(key);
    return [`${key || '(root)'}${from ? ` (from ${from})` : ''}: ${issue.message}`];
  });
  return { success: false, problems };
}

/**
 * A union whose value has the type of exactly one option (e.g. `peers.x: {url, auth}` rather than a URL string)
 * reports that option's problems, with full paths, instead of zod's bare "Invalid input".
 */
function unwrapUnion(issue: z.core.$ZodIssue): z.core.$ZodIssue[] {
  if (issue.code !== 'invalid_union' || !issue.errors.length) return [issue];
  const typed = issue.errors.filter(
    (branch) => !(branch.length === 1 && branch[0]?.code === 'invalid_type' && branch[0].path.length === 0),
  );
  if (typed.length !== 1) return [issue];
  return (typed[0] ?? []).flatMap((sub) => unwrapUnion({ ...sub, path: [...issue.path, ...sub.path] }));
}

/** A YAML file's top-level mapping; a ConfigError naming the file when it cannot be read, parsed or is not a mapping. */
export function readYaml(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(file, [`cannot read the file: ${(err as Error).message}`]);
  }
  let doc: unknown;
  try {
    doc = parseYaml(text) ?? {};
  } catch (err) {
    throw new ConfigError(file, [`not valid YAML: ${(err as Error).message}`]);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    throw new ConfigError(file, ['the file must contain a YAML mapping at the top level']);
  }
  return doc as Record<string, unknown>;
}

function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  let node = target;
  for (const key of keys.slice(0, -1)) {
    const next = node[key];
    if (typeof next !== 'object' || next === null) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[keys[keys.length - 1] as string] = value;
}

/** A boolean from YAML (`true`) or from env text (`1`, `yes`, `true`, `0`, `no`, `false`). */
export const boolish = z.union([z.boolean(), z.stringbool()]);

/** A positive integer from YAML or env text. */
export const positiveInt = z.coerce.number().int().positive();

/** A non-negative number from YAML or env text. */
export const nonNegative = z.coerce.number().nonnegative();

/** `data_dir:` of an app (databases, tokens, artifacts); relative to the working directory. STOA_DATA_DIR. */
export const dataDirField = z.string().default('./data').meta({ env: 'STOA_DATA_DIR' });
