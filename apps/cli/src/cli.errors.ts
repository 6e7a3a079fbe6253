/** A command that cannot go on: its message says what to do next; `exitCode` 2 means the command line was wrong. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: 1 | 2 = 1,
  ) {
    super(message);
  }
}
