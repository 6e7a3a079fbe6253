import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { KernelStartError } from './kernel.errors';

/** The interpreter kernels run with, resolved once (never a pyenv shim per session). */
export interface PythonInfo {
  executable: string;
  version: string;
  /** sys.prefix and sys.base_prefix: what a sandboxed kernel must be able to read. */
  prefix: string;
  basePrefix: string;
}

/** Resolves `python` (a name on PATH or a path) to the real interpreter behind it. */
export function resolvePython(python: string): PythonInfo {
  let out: string;
  try {
    out = execFileSync(
      python,
      [
        '-c',
        'import sys; print(sys.executable); print(".".join(map(str, sys.version_info[:3]))); print(sys.prefix); print(sys.base_prefix)',
      ],
      {
        encoding: 'utf8',
        timeout: 20_000,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
  } catch (err) {
    throw new KernelStartError(
      `Cannot run the kernel interpreter '${python}': ${(err as Error).message.split('\n')[0]}. ` +
        'Set environment.python in server.yaml (or STOA_PYTHON) to a Python >= 3.8 executable.',
    );
  }
  const [executable, version, prefix, basePrefix] = out.trim().split('\n');
  if (!executable || !version) throw new KernelStartError(`'${python}' did not report its executable path.`);
  const [major, minor] = version.split('.').map(Number);
  if ((major ?? 0) < 3 || (major === 3 && (minor ?? 0) < 8)) {
    throw new KernelStartError(`Kernel interpreter ${executable} is Python ${version}; Stoa needs Python >= 3.8.`);
  }
  return {
    executable,
    version,
    prefix: prefix ?? dirname(dirname(executable)),
    basePrefix: basePrefix ?? prefix ?? dirname(dirname(executable)),
  };
}

/** Absolute path of the stdlib driver script, found from source and from dist alike. */
export function driverPath(): string {
  let dir = __dirname;
  for (let i = 0; i < 8; i++) {
    const candidate = join(dir, 'libs', 'kernel', 'python', 'stoa_driver.py');
    if (existsSync(candidate)) return candidate;
    const sibling = join(dir, 'python', 'stoa_driver.py');
    if (existsSync(sibling)) return sibling;
    dir = dirname(dir);
  }
  throw new KernelStartError('Kernel driver stoa_driver.py not found; reinstall Stoa (libs/kernel/python is missing).');
}

/** The code screen's "Disallowed actions" block, rendered by stoa_screen.py itself (one source of truth). */
export function disallowedActionsText(python: string, driver: string, prefixes: readonly string[]): string {
  const script =
    'import json, sys; sys.path.insert(0, sys.argv[1]); import stoa_screen; print(stoa_screen.disallowed_actions_text(tuple(json.loads(sys.argv[2]))))';
  return execFileSync(python, ['-c', script, dirname(driver), JSON.stringify(prefixes)], {
    encoding: 'utf8',
    timeout: 20_000,
  }).trim();
}
