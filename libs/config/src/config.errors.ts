import { appError, ErrorKind } from '@stoa/core';

/** A config file or env override is unusable; the message lists every bad key at once. */
export class ConfigError extends appError('CONFIG_INVALID', ErrorKind.invalid) {
  constructor(
    readonly source: string,
    readonly problems: readonly string[],
  ) {
    super(
      `Invalid configuration (${source}):\n` +
        problems.map((p) => `  - ${p}`).join('\n') +
        '\nFix these keys in the YAML file or the environment variables named above, then start again.',
    );
  }
}
