/**
 * The venv / uv / conda build steps (reference §10.3). Each step's output is kept as a bounded
 * tail and becomes the error message when the step fails. Dependency content is written next to
 * the environment as `{build_dir}.requirements.txt` (venv, uv) or `{build_dir}.environment.yml`
 * (conda): conda refuses an existing prefix, so the file cannot live inside the environment.
 */
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EnvironmentBuildError } from './provision.errors';
import { findExecutable, runCommand, type CommandResult } from './process-utils';

/** Environment types that are built (everything but `system`). */
export type BuiltEnvironmentType = 'venv' | 'uv' | 'conda';

export interface BuildContext {
  prefix: string;
  /** Base interpreter (venv: `-m venv`; uv: `--python`; conda: unused, python comes from environment.yml). */
  python: string;
  requirements: string;
  additionalCommands: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  log: (msg: string) => void;
}

export type Builder = (ctx: BuildContext) => Promise<void>;

/** The interpreter kernels use inside a built environment (all types). */
export function interpreterPath(prefix: string): string {
  return join(prefix, 'bin', 'python');
}

/** The builder for `type`; throws at once when its tool is not installed. */
export function resolveBuilder(type: BuiltEnvironmentType, env: NodeJS.ProcessEnv): Builder {
  if (type === 'venv') return buildVenv;
  if (type === 'uv') {
    const uv = findExecutable('uv', env);
    if (!uv) {
      throw new EnvironmentBuildError(
        'environment.type uv needs the `uv` executable on PATH, and it was not found; install uv (https://docs.astral.sh/uv/) or use type: venv.',
      );
    }
    return (ctx) => buildUv(ctx, uv);
  }
  const conda = findExecutable('mamba', env) ?? findExecutable('conda', env);
  if (!conda) {
    throw new EnvironmentBuildError(
      'environment.type conda needs `mamba` or `conda` on PATH, and neither was found; install Miniforge (https://conda-forge.org/download/) or use type: venv with a requirements list.',
    );
  }
  return (ctx) => buildConda(ctx, conda);
}

async function buildVenv(ctx: BuildContext): Promise<void> {
  await step(ctx, 'create venv', ctx.python, ['-m', 'venv', ctx.prefix]);
  if (ctx.requirements.trim()) {
    const file = writeDependencies(ctx, 'requirements.txt');
    const args = ['-m', 'pip', 'install', '--no-input', '--progress-bar', 'off', '-r', file, ...findLinks(ctx.env)];
    await step(ctx, 'install requirements', interpreterPath(ctx.prefix), args);
  }
  await runAdditionalCommands(ctx, activateVenv(ctx.prefix), ctx.env);
}

async function buildUv(ctx: BuildContext, uv: string): Promise<void> {
  const env = withUvIndex(ctx.env);
  await step(ctx, 'create venv (uv)', uv, ['venv', ctx.prefix, '--python', ctx.python], env);
  if (ctx.requirements.trim()) {
    const file = writeDependencies(ctx, 'requirements.txt');
    const args = ['pip', 'install', '--python', interpreterPath(ctx.prefix), '-r', file, ...findLinks(ctx.env)];
    await step(ctx, 'install requirements (uv)', uv, args, env);
  }
  await runAdditionalCommands(ctx, activateVenv(ctx.prefix), ctx.env);
}

async function buildConda(ctx: BuildContext, conda: string): Promise<void> {
  if (!ctx.requirements.trim()) {
    throw new EnvironmentBuildError(
      'environment.type conda needs environment.requirements: the content of an environment.yml (with python among its dependencies).',
    );
  }
  const file = writeDependencies(ctx, 'environment.yml');
  await step(ctx, 'create conda environment', conda, [
    'env',
    'create',
    '--prefix',
    ctx.prefix,
    '--file',
    file,
    '--yes',
  ]);
  const env = {
    ...ctx.env,
    PATH: `${join(ctx.prefix, 'bin')}:${ctx.env.PATH ?? ''}`,
    CONDA_PREFIX: ctx.prefix,
    CONDA_DEFAULT_ENV: ctx.prefix,
  };
  await runAdditionalCommands(ctx, '', env);
}

/** `--find-links` for a local wheelhouse (never `--no-index`: the index stays reachable). */
function findLinks(env: NodeJS.ProcessEnv): string[] {
  const dir = [env.MCP_WHEELHOUSE, '/opt/wheelhouse', '/opt/wheels'].find((d) => d && isDirectory(d));
  return dir ? ['--find-links', dir] : [];
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** uv ignores PIP_* settings; carry the operator's package index over unless uv's own is set. */
function withUvIndex(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out = { ...env };
  if (env.PIP_INDEX_URL && !env.UV_INDEX_URL && !env.UV_DEFAULT_INDEX) out.UV_DEFAULT_INDEX = env.PIP_INDEX_URL;
  if (env.PIP_EXTRA_INDEX_URL && !env.UV_EXTRA_INDEX_URL && !env.UV_INDEX)
    out.UV_EXTRA_INDEX_URL = env.PIP_EXTRA_INDEX_URL;
  return out;
}

function writeDependencies(ctx: BuildContext, name: string): string {
  const file = `${ctx.prefix}.${name}`;
  writeFileSync(file, ctx.requirements.endsWith('\n') ? ctx.requirements : `${ctx.requirements}\n`);
  return file;
}

function activateVenv(prefix: string): string {
  return `source ${shellQuote(join(prefix, 'bin', 'activate'))} && `;
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

async function runAdditionalCommands(ctx: BuildContext, preamble: string, env: NodeJS.ProcessEnv): Promise<void> {
  const total = ctx.additionalCommands.length;
  for (const [i, cmd] of ctx.additionalCommands.entries()) {
    const label = `additional command ${i + 1}/${total}`;
    ctx.log(`${label}: ${cmd}`);
    const res = await spawnStep(ctx, label, 'bash', ['--noprofile', '--norc', '-c', preamble + cmd], env);
    if (res.code !== 0) {
      throw new EnvironmentBuildError(
        `Additional command ${i + 1}/${total} failed (exit=${exitText(res)}): '${cmd}'\n${res.output.trim()}\n` +
          'Fix or remove it under environment.additional_commands and restart; the environment is rebuilt on the next start.',
        { step: label, stderr: res.stderr },
      );
    }
  }
}

async function step(ctx: BuildContext, label: string, file: string, args: string[], env = ctx.env): Promise<void> {
  const commandLine = [file, ...args].join(' ');
  ctx.log(`${label}: ${commandLine}`);
  const res = await spawnStep(ctx, label, file, args, env);
  if (res.code === 0) return;
  const tail = res.stderr.trim() || res.stdout.trim();
  throw new EnvironmentBuildError(
    `Environment build step '${label}' failed (exit=${exitText(res)}): ${commandLine}\n${tail}\n` +
      `Fix the cause above (usually environment.requirements, environment.python or the package index) and restart; ${ctx.prefix} is rebuilt on the next start.`,
    { step: label, stderr: res.stderr },
  );
}

async function spawnStep(
  ctx: BuildContext,
  label: string,
  file: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<CommandResult> {
  try {
    return await runCommand(file, args, { cwd: ctx.cwd, env, label, log: ctx.log });
  } catch (err) {
    throw new EnvironmentBuildError(
      `Cannot run '${file}' for environment build step '${label}': ${(err as Error).message}. Check that it is installed and on PATH (for venv, environment.python must name a Python 3 interpreter).`,
      { step: label },
      { cause: err },
    );
  }
}

function exitText(res: CommandResult): string {
  return res.code !== null ? String(res.code) : String(res.signal);
}
