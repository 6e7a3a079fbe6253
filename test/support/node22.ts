import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './paths';

/**
 * tools/node22: Node 22 (npm package `node`) with the tools that need it (MCP conformance suites, MCP Inspector),
 * in a package of its own so node_modules/.bin/node never shadows the repository's Node 20.
 */
export const NODE22_DIR = join(ROOT, 'tools', 'node22');
/** The Node 22 binary. */
export const NODE22 = join(NODE22_DIR, 'node_modules', '.bin', 'node');

/** Installs tools/node22 from its lockfile when missing (a clean clone, CI). */
export function ensureNode22Tools(): void {
  if (existsSync(NODE22)) return;
  console.log('installing tools/node22 (Node 22, conformance suites, Inspector)…');
  const r = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: NODE22_DIR, stdio: 'inherit' });
  if (r.status !== 0) throw new Error('npm ci in tools/node22 failed: see the output above, then run it there by hand');
}
