import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { z } from 'zod';
import { checkConfig, ConfigError, readYaml } from '@stoa/config';
import { loadDomain, skillsConfigSchema, toolsConfigSchema } from '@stoa/tools';
import { distRoot } from './assets';
import { CliError } from './cli.errors';

/** The apps whose YAML `stoa check` validates, each against its own schema (`<app>ConfigSchema`). */
export const CHECKED_APPS = ['executor', 'router', 'gateway', 'dispatcher', 'activity', 'square'] as const;
export type CheckedApp = (typeof CHECKED_APPS)[number];

/** Top-level keys only one app's YAML has; a file with none of them is an executor's server.yaml. */
const DISTINCTIVE_KEYS: [CheckedApp, string[]][] = [
  ['router', ['upstreams', 'bridges']],
  ['dispatcher', ['workers', 'strategy', 'worker_auth']],
  ['gateway', ['upstream', 'policy']],
  ['activity', ['ingest', 'stream', 'dashboard_dir']],
  ['square', ['chat', 'presence', 'board', 'locks', 'instructions_file']],
];

export interface CheckReport {
  app: CheckedApp;
  problems: string[];
}

/** Validates a config file against its app's schema (and an executor's tool manifest and skills); every problem. */
export async function checkConfigFile(file: string, app?: string): Promise<CheckReport> {
  const doc = readDocument(file);
  const kind = app ? appNamed(app) : guessApp(doc);
  const schema = await appSchema(kind);
  const checked = checkConfig(schema, doc);
  if (!checked.success) return { app: kind, problems: checked.problems };
  if (kind === 'executor') return { app: kind, problems: domainProblems(checked.data, file) };
  return { app: kind, problems: [] };
}

function readDocument(file: string): Record<string, unknown> {
  if (!existsSync(file)) throw new CliError(`${file} does not exist: pass the path of a YAML config file.`, 2);
  try {
    return readYaml(file);
  } catch (err) {
    if (err instanceof ConfigError) throw new CliError(`${file}: ${err.problems.join('; ')}.`);
    throw err;
  }
}

function appNamed(app: string): CheckedApp {
  const found = CHECKED_APPS.find((a) => a === app);
  if (!found) throw new CliError(`--app ${app}: use one of ${CHECKED_APPS.join(', ')}.`, 2);
  return found;
}

function guessApp(doc: Record<string, unknown>): CheckedApp {
  const keys = Object.keys(doc);
  return DISTINCTIVE_KEYS.find(([, distinctive]) => distinctive.some((k) => keys.includes(k)))?.[0] ?? 'executor';
}

/**
 * The app's own schema, loaded from its build: apps never import each other, and the CLI must judge a file by
 * exactly the rules the app applies at start.
 */
async function appSchema(app: CheckedApp): Promise<z.ZodType> {
  const file = join(distRoot(), 'apps', app, 'apps', app, 'src', `${app}.config.js`);
  if (!existsSync(file)) throw new CliError(`${file} is missing: run \`npm run build\` first.`);
  const mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  const schema = mod[`${app}ConfigSchema`];
  if (!schema || typeof (schema as z.ZodType).safeParse !== 'function')
    throw new CliError(`${file} exports no ${app}ConfigSchema: rebuild with \`npm run build\`.`);
  return schema as z.ZodType;
}

/** An executor's tool manifest and skills directory, loaded the way the executor loads them. */
function domainProblems(config: unknown, file: string): string[] {
  const c = config as { name: string; tools: unknown; skills: unknown };
  try {
    loadDomain(c.name, toolsConfigSchema.parse(c.tools), skillsConfigSchema.parse(c.skills), dirname(resolve(file)));
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.problems.map((p) => `${err.source}: ${p}`);
    throw err;
  }
}
