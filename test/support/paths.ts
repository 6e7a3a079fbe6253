import { join, resolve } from 'node:path';

/** Repository root. */
export const ROOT = resolve(__dirname, '..', '..');
/** Built executor entry. */
export const EXECUTOR_MAIN = join(ROOT, 'dist', 'apps', 'executor', 'main.js');
/** Built router entry. */
export const ROUTER_MAIN = join(ROOT, 'dist', 'apps', 'router', 'main.js');
/** Built gateway entry. */
export const GATEWAY_MAIN = join(ROOT, 'dist', 'apps', 'gateway', 'main.js');
/** Built dispatcher entry. */
export const DISPATCHER_MAIN = join(ROOT, 'dist', 'apps', 'dispatcher', 'main.js');
/** Built activity dashboard entry. */
export const ACTIVITY_MAIN = join(ROOT, 'dist', 'apps', 'activity', 'main.js');
/** Python venv with the `mcp` client used by e2e tests (created by the global setup). */
export const TEST_VENV = join(ROOT, '.test-venv');
export const TEST_PYTHON = join(TEST_VENV, 'bin', 'python');
/** The `stoa` CLI's bin (`npx stoa`). */
export const STOA_BIN = join(ROOT, 'bin', 'stoa.mjs');
