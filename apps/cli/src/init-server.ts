import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { serverName } from '@stoa/config';
import { cliAsset } from './assets';
import { CliError } from './cli.errors';

export interface InitServerOptions {
  name: string;
  /** Where to write; default ./<name>. */
  dir?: string;
  port?: number;
}

/** The template files (under apps/cli/templates/server) and where each lands; `tools_pkg` becomes the package. */
const FILES = [
  'server.yaml',
  'tools.yaml',
  'skills/getting-started.md',
  'tools_pkg/__init__.py',
  'tools_pkg/greet.py',
] as const;

/** Scaffolds server.yaml, tools.yaml, a Python tools package and a skill that start at once; returns the paths. */
export function initServer(opts: InitServerOptions): { dir: string; files: string[] } {
  const named = serverName.safeParse(opts.name);
  if (!named.success) throw new CliError(`'${opts.name}' cannot name a server: ${named.error.issues[0]?.message}`, 2);
  const dir = resolve(opts.dir ?? opts.name);
  if (existsSync(dir) && readdirSync(dir).length)
    throw new CliError(`${dir} is not empty: choose another --dir or remove it first.`);
  const pkg = `${opts.name.replace(/-/g, '_').toLowerCase()}_tools`.replace(/^(\d)/, 'tools_$1');
  const values: Record<string, string> = {
    name: opts.name,
    package: pkg,
    port: String(opts.port ?? 8000),
    dir: relative(process.cwd(), dir) || '.',
  };
  const templates = cliAsset('templates/server');
  const files = FILES.map((file) => {
    const target = join(dir, file.replace(/^tools_pkg\//, `${pkg}/`));
    mkdirSync(join(target, '..'), { recursive: true });
    const text = readFileSync(join(templates, file), 'utf8').replace(/\{\{(\w+)\}\}/g, (_, key: string) => {
      const value = values[key];
      if (value === undefined) throw new Error(`template ${file} uses an unknown value {{${key}}}`);
      return value;
    });
    writeFileSync(target, text);
    return target;
  });
  return { dir, files };
}
