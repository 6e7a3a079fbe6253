import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { ConfigError } from './config.errors';

/** Environment variable → dotted config path (e.g. `PORT` → `server.port`). */
export type EnvMap = Readonly<Record<string, string>>;

export interface LoadConfigOptions<S extends z.ZodType> {
  schema: S;
  /** YAML file to read; omitted → only defaults and env. */
  file?: string;
  env?: NodeJS.ProcessEnv;
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

/** Reads YAML + env + overrides and validates them; throws one ConfigError naming every bad key. */
export function loadConfig<S extends z.ZodType>(options: LoadConfigOptions<S>): LoadedConfig<z.output<S>> {
  const source = options.file ?? '(defaults and environment)';
  const raw = options.file ? readYaml(options.file) : {};
  const env = options.env ?? process.env;
  options.prepare?.(raw, env);
  const envSources = new Map<string, string>();
  for (const [name, path] of Object.entries(options.envMap ?? {})) {
    const value = env[name];
    if (value !== undefined && value !== '') {
      setPath(raw, path, value);
      envSources.set(path, name);
    }
  }
  for (const [path, value] of Object.entries(options.overrides ?? {})) {
    if (value !== undefined) setPath(raw, path, value);
  }
  const parsed = options.schema.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const key = issue.path.map(String).join('.') || '(root)';
      const from = envSources.get(key);
      return `${key}${from ? ` (from ${from})` : ''}: ${issue.message}`;
    });
    throw new ConfigError(source, problems);
  }
  return { config: parsed.data, baseDir: options.file ? dirname(resolve(options.file)) : process.cwd() };
}

function readYaml(file: string): Record<string, unknown> {
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
