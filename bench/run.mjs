#!/usr/bin/env node
// Bench runner: `npm run bench -- <name> [--build]` runs bench/<name>.ts under tsx (tsconfig `paths`
// aliases resolve to libs/*/src). Results are JSON lines on stdout; everything else goes to stderr.
// `npm run bench -- --smoke` (npm run bench:smoke) runs every bench that needs no extra service (all of them with
// STOA_REQUIRE_SERVICES=1) once with
// BENCH_SMOKE=1 (a few rounds each) and exits 1 when any of them fails; `--smoke <name>` runs one that way.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const benchDir = dirname(fileURLToPath(import.meta.url));
const root = dirname(benchDir);
const executorMain = join(root, 'dist', 'apps', 'executor', 'main.js');

/** Benches that need a service beyond the machine itself; smoke runs leave them out (name them to run them). */
const NEEDS_SERVICE = {
  'async-job': 'Redis (STOA_TEST_REDIS_URL, default redis://127.0.0.1:6379)',
  'parallel-scaling': 'Redis (STOA_TEST_REDIS_URL, default redis://127.0.0.1:6379)',
  'square-await': 'Redis and PostgreSQL (STOA_TEST_REDIS_URL, STOA_TEST_DATABASE_URL)',
};
/** A smoke run of one bench that takes longer than this has hung. */
const SMOKE_TIMEOUT_MS = 180_000;

const available = readdirSync(benchDir)
  .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
  .map((f) => f.slice(0, -3))
  .sort();

const args = process.argv.slice(2);
const build = args.includes('--build');
const smoke = args.includes('--smoke') || process.env.BENCH_SMOKE === '1';
const [name, ...rest] = args.filter((a) => a !== '--build' && a !== '--smoke');

if (name ? !available.includes(name) : !smoke) {
  process.stderr.write(
    `${name ? `Unknown bench '${name}'. ` : ''}Usage: npm run bench -- <name> [--build] | npm run bench -- --smoke [<name>]\n` +
      `Available benches:\n${available.map((b) => `  ${b}${NEEDS_SERVICE[b] ? `   (needs ${NEEDS_SERVICE[b]})` : ''}`).join('\n')}\n`,
  );
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

/**
 * Runs one bench to completion in its own process group; returns its exit code (1 for a signal, a spawn error
 * or, in smoke mode, a timeout). Executors a failed bench left running are stopped with the group.
 */
async function runOne(bench, benchArgs) {
  const child = spawn(process.execPath, ['--import', 'tsx', join(benchDir, `${bench}.ts`), ...benchArgs], {
    cwd: root,
    stdio: 'inherit',
    detached: true,
    env: { ...process.env, TSX_TSCONFIG_PATH: join(root, 'tsconfig.json'), ...(smoke ? { BENCH_SMOKE: '1' } : {}) },
  });
  const stopGroup = (signal) => {
    try {
      process.kill(-child.pid, signal);
    } catch {
      /* the group is gone */
    }
  };
  const timer = smoke
    ? setTimeout(() => {
        process.stderr.write(`bench: ${bench} did not finish within ${SMOKE_TIMEOUT_MS / 1000} s\n`);
        stopGroup('SIGTERM');
      }, SMOKE_TIMEOUT_MS)
    : undefined;
  const code = await new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (status, signal) => resolve(status ?? (signal ? 1 : 0)));
  });
  clearTimeout(timer);
  stopGroup('SIGTERM'); // leftovers of a bench that failed half-way (its executors, their kernels)
  return code;
}

if (name) process.exit(await runOne(name, rest));

// Smoke run. First: a file a bench needs that git ignores works here and is missing on a clean clone.
const ignored = spawnSync('git', ['ls-files', '--others', '--ignored', '--exclude-standard', '--directory', 'bench'], {
  cwd: root,
  encoding: 'utf8',
});
const hidden = ignored.status === 0 ? ignored.stdout.split('\n').filter((p) => p && !p.includes('__pycache__')) : [];
if (hidden.length) {
  process.stderr.write(
    `bench: git ignores ${hidden.join(', ')}, so a clean checkout lacks it; anchor the .gitignore pattern (e.g. /data/) and commit it\n`,
  );
  process.exit(1);
}
// Then every bench without an extra service, one after another; with STOA_REQUIRE_SERVICES=1 (CI, where Redis
// runs) the service benches too, so one that cannot run any more turns CI red.
const withServices = process.env.STOA_REQUIRE_SERVICES === '1';
const results = [];
for (const bench of available) {
  if (NEEDS_SERVICE[bench] && !withServices) {
    results.push({ bench, outcome: `skipped (needs ${NEEDS_SERVICE[bench]})` });
    continue;
  }
  process.stderr.write(`bench: smoke ${bench}\n`);
  const t0 = Date.now();
  const code = await runOne(bench, rest);
  results.push({
    bench,
    outcome: `${code === 0 ? 'ok' : `FAILED (exit ${code})`} in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
    failed: code !== 0,
  });
}
process.stderr.write(
  `bench: smoke summary\n${results.map((r) => `  ${r.bench.padEnd(20)} ${r.outcome}`).join('\n')}\n`,
);
const failed = results.filter((r) => r.failed).map((r) => r.bench);
if (failed.length)
  process.stderr.write(
    `bench: ${failed.length} bench(es) failed in smoke mode: ${failed.join(', ')}. Run one with npm run bench -- --smoke <name> to see why.\n`,
  );
process.exit(failed.length ? 1 : 0);
