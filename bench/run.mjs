#!/usr/bin/env node
// Bench runner: `npm run bench -- <name> [--build]` runs bench/<name>.ts under tsx (tsconfig `paths`
// aliases resolve to libs/*/src). Results are JSON lines on stdout; everything else goes to stderr.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const benchDir = dirname(fileURLToPath(import.meta.url));
const root = dirname(benchDir);
const executorMain = join(root, 'dist', 'apps', 'executor', 'main.js');

const available = readdirSync(benchDir)
  .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
  .map((f) => f.slice(0, -3))
  .sort();

const args = process.argv.slice(2);
const build = args.includes('--build');
const [name, ...rest] = args.filter((a) => a !== '--build');

if (!name || !available.includes(name)) {
  process.stderr.write(`${name ? `Unknown bench '${name}'. ` : ''}Usage: npm run bench -- <name> [--build]\nAvailable benches:\n${available.map((b) => `  ${b}`).join('\n')}\n`);
  process.exit(2);
}

// The benches start the built executor; build when asked or when the entry is missing.
if (build || !existsSync(executorMain)) {
  process.stderr.write(`bench: ${build ? '--build given' : `${executorMain} missing`}; running npm run build\n`);
  // stdout of the build goes to stderr so stdout stays pure JSON lines.
  const r = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: ['ignore', 2, 2] });
  if (r.status !== 0) {
    process.stderr.write('bench: npm run build failed\n');
    process.exit(r.status ?? 1);
  }
}

const r = spawnSync(process.execPath, ['--import', 'tsx', join(benchDir, `${name}.ts`), ...rest], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, TSX_TSCONFIG_PATH: join(root, 'tsconfig.json') },
});
if (r.error) throw r.error;
process.exit(r.status ?? (r.signal ? 1 : 0));
