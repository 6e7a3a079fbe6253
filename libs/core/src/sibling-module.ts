import { join } from 'node:path';

/**
 * A module that runs on its own (a child process or worker thread) beside the calling one: its compiled
 * JavaScript in a build, or its TypeScript through tsx's CommonJS hook when the caller runs from source (tests;
 * tsx is a dev dependency). `caller` is the caller's `__filename`; `name` the module's file name without extension.
 */
export function siblingModule(caller: string, name: string): { file: string; execArgv: string[] } {
  const fromSource = caller.endsWith('.ts');
  return {
    file: join(caller, '..', `${name}${fromSource ? '.ts' : '.js'}`),
    execArgv: fromSource ? ['--require', require.resolve('tsx/cjs')] : [],
  };
}
