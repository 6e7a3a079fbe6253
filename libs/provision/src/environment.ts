/**
 * Kernel environment builder (reference §10.3, `pip` is our `venv`).
 *
 * `type: system` uses `python` as is. Other types build `build_dir` (default
 * `{dataDir}/envs/{server}/{type}`) once; kernels then run `{build_dir}/bin/python`.
 * A marker `{build_dir}/.env_build_complete` holds the sha256 of (type, python, requirements,
 * additional_commands): a missing or different marker means the build is incomplete or the
 * configuration changed, so the directory is deleted and rebuilt (the reference misses changes).
 * Builds of one directory are serialised across processes by `{build_dir}.lock` (see build-lock.ts).
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { boolish } from '@stoa/config';
import { withBuildLock } from './build-lock';
import { interpreterPath, resolveBuilder } from './environment-builders';
import { EnvironmentBuildError, EnvironmentNotReadyError } from './provision.errors';

/** The build keys of `environment:` (merge into a bigger object schema with {@link checkEnvironmentBuild}). */
export const environmentBuildFields = {
  /** `system`: use `python` as is; `venv` (the reference's pip), `uv`, `conda`: build `build_dir`. */
  type: z.enum(['system', 'venv', 'uv', 'conda']).default('system'),
  /** system: the kernel interpreter; venv/uv: the base interpreter of the new environment. */
  python: z.string().min(1).default('python3').meta({ env: 'STOA_PYTHON' }),
  /** Content of requirements.txt (venv, uv) or environment.yml (conda). */
  requirements: z.string().default(''),
  /** Default `{dataDir}/envs/{server}/{type}`; relative paths resolve against the config file. */
  build_dir: z.string().min(1).optional(),
  /** Build a missing or outdated environment at start; false → use what exists, never build. */
  auto_build: boolish.default(true),
  /** Shell commands run in the activated environment after the install. */
  additional_commands: z.array(z.string().min(1)).default([]),
};

/** Cross-field rules of the build keys. */
export function checkEnvironmentBuild(
  env: { type: string; requirements: string; additional_commands: string[] },
  ctx: z.RefinementCtx,
): void {
  if (env.type === 'system' && (env.requirements.trim() || env.additional_commands.length)) {
    ctx.addIssue({
      code: 'custom',
      path: ['type'],
      message:
        'environment.requirements / additional_commands need a built environment; set type: venv, uv or conda (system uses python as is)',
    });
  }
  if (env.type === 'conda' && !env.requirements.trim()) {
    ctx.addIssue({
      code: 'custom',
      path: ['requirements'],
      message: 'type conda needs requirements: the content of an environment.yml',
    });
  }
}

/** The build keys of `environment:` in a server YAML (the kernel lib reads `env`/`passthrough_env`). */
export const environmentBuildSchema = z
  .strictObject(environmentBuildFields)
  .superRefine(checkEnvironmentBuild)
  .prefault({});
export type EnvironmentBuildConfig = z.output<typeof environmentBuildSchema>;

export interface EnsureEnvironmentOptions {
  config: EnvironmentBuildConfig;
  serverName: string;
  /** Root of the server's data (`build_dir` defaults below it). */
  dataDir: string;
  /** Directory of the config file: relative `build_dir` and build commands resolve against it. */
  baseDir: string;
  log?: (msg: string) => void;
  /** Environment of the build tools (PIP_INDEX_URL, PATH, MCP_WHEELHOUSE…); default process.env. */
  env?: NodeJS.ProcessEnv;
}

export interface EnvironmentInfo {
  /** Interpreter for kernels. */
  python: string;
  /** The environment directory; undefined for `system`. */
  prefix: string | undefined;
  /** True when this call built (or rebuilt) the environment. */
  built: boolean;
}

const MARKER = '.env_build_complete';

/** Makes sure the configured environment exists and matches the config, building it if allowed. */
export async function ensureEnvironment(opts: EnsureEnvironmentOptions): Promise<EnvironmentInfo> {
  const { config } = opts;
  if (config.type === 'system') return { python: config.python, prefix: undefined, built: false };
  const log = opts.log ?? (() => undefined);
  const prefix = environmentDir(opts);
  const python = interpreterPath(prefix);
  const fingerprint = fingerprintOf(config);
  if (isReady(prefix, fingerprint)) return { python, prefix, built: false };
  if (!config.auto_build) {
    if (!existsSync(python)) {
      throw new EnvironmentNotReadyError(
        `Python environment not found at ${python} and auto_build is disabled. ` +
          'Build it once (set environment.auto_build: true, or run the server with --warm), ' +
          `or point environment.build_dir at an existing ${config.type} environment.`,
      );
    }
    log(
      `environment at ${prefix} was not built from this configuration; using it as is because auto_build is disabled`,
    );
    return { python, prefix, built: false };
  }
  const build = resolveBuilder(config.type, opts.env ?? process.env);
  return withBuildLock(
    prefix,
    async () => {
      if (isReady(prefix, fingerprint)) {
        log(`environment at ${prefix} was built meanwhile by another process`);
        return { python, prefix, built: false };
      }
      const started = Date.now();
      const why = existsSync(prefix) ? 'configuration changed or the last build did not finish' : 'not built yet';
      log(`building ${config.type} environment at ${prefix} (${why})`);
      rmSync(prefix, { recursive: true, force: true });
      await build({
        prefix,
        python: config.python,
        requirements: config.requirements,
        additionalCommands: config.additional_commands,
        cwd: opts.baseDir,
        env: opts.env ?? process.env,
        log,
      });
      if (!existsSync(python)) {
        throw new EnvironmentBuildError(
          `The ${config.type} build finished but ${python} does not exist; ` +
            (config.type === 'conda'
              ? 'add python to the dependencies of environment.requirements.'
              : 'check environment.python.'),
        );
      }
      writeFileSync(join(prefix, MARKER), `${fingerprint}\n`);
      log(`environment ready at ${prefix} (built in ${((Date.now() - started) / 1000).toFixed(1)}s)`);
      return { python, prefix, built: true };
    },
    { log },
  );
}

/** Absolute directory of a built environment (also for `system`, where nothing is built there). */
export function environmentDir(
  opts: Pick<EnsureEnvironmentOptions, 'config' | 'serverName' | 'dataDir' | 'baseDir'>,
): string {
  return resolve(opts.baseDir, opts.config.build_dir ?? join(opts.dataDir, 'envs', opts.serverName, opts.config.type));
}

function fingerprintOf(config: EnvironmentBuildConfig): string {
  const { type, python, requirements, additional_commands } = config;
  return createHash('sha256').update(JSON.stringify({ type, python, requirements, additional_commands })).digest('hex');
}

function isReady(prefix: string, fingerprint: string): boolean {
  if (!existsSync(interpreterPath(prefix))) return false;
  try {
    return readFileSync(join(prefix, MARKER), 'utf8').trim() === fingerprint;
  } catch {
    return false;
  }
}
