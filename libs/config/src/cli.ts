import { parseArgs } from 'node:util';
import { StartupRefusedError } from '@stoa/core';

/** Every app's command line, read once by its `main.ts`. */
export interface CliArgs {
  /** `--help`: the caller prints its usage and stops. */
  help: boolean;
  /** `--config <yaml>`, else `STOA_CONFIG`. */
  file: string | undefined;
  /** `--host`, `--port`, `--allow-unauthenticated-remote` as dotted config paths (undefined when not given). */
  overrides: Record<string, unknown>;
  /** The app's own boolean flags (e.g. the executor's `--warm`). */
  flags: Record<string, boolean>;
}

/**
 * Parses the flags every app shares (`--config/-c`, `--host`, `--port`, `--allow-unauthenticated-remote`,
 * `--help/-h`) plus `booleans`; an unknown or malformed flag refuses the start with the app's usage.
 */
export function parseCli(
  usage: string,
  booleans: readonly string[] = [],
  argv = process.argv.slice(2),
  env = process.env,
): CliArgs {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        config: { type: 'string', short: 'c' },
        host: { type: 'string' },
        port: { type: 'string' },
        'allow-unauthenticated-remote': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
        ...Object.fromEntries(booleans.map((name) => [name, { type: 'boolean' as const }])),
      },
    }));
  } catch (err) {
    throw new StartupRefusedError(`${(err as Error).message}\n${usage}`);
  }
  const given: Record<string, unknown> = values;
  return {
    help: values.help === true,
    file: typeof values.config === 'string' ? values.config : env.STOA_CONFIG,
    overrides: {
      'server.host': values.host,
      'server.port': values.port,
      'server.allow_unauthenticated_remote': values['allow-unauthenticated-remote'] ? true : undefined,
    },
    flags: Object.fromEntries(booleans.map((name) => [name, given[name] === true])),
  };
}
