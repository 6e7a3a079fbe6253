import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { NODE22, NODE22_DIR } from '../../test/support/node22';

/** A protocol era and the suite release that tests it. */
export interface Era {
  name: '2025-11-25' | '2026-07-28';
  /** Package directory under tools/node22/node_modules. */
  pkg: string;
  /** Arguments selecting the scenarios. */
  select: string[];
  /** Extension scenarios run one by one besides the selection (skipped when the server does not declare them). */
  extra: string[];
}

export const ERAS: readonly Era[] = [
  // 0.1.16 has no --requirements: --spec-version 2025-11-25 is every scenario of that revision.
  { name: '2025-11-25', pkg: 'conformance-2025', select: ['--spec-version', '2025-11-25'], extra: [] },
  // The 2026-07-28 requirement set also runs (unscored) the tasks extension scenarios. tasks-status-notifications
  // reports SKIPPED in 0.2.0-alpha.12 whatever the server does (a placeholder pending the suite's rewrite against
  // subscriptions/listen); apps/executor/test/tasks.e2e-spec.ts and the router e2e cover notifications/tasks.
  {
    name: '2026-07-28',
    pkg: 'conformance-2026',
    select: ['--requirements', '2026-07-28'],
    extra: ['sep-2640-skills-directory', 'sep-2640-skills-enumeration', 'sep-2640-skills-manifest'],
  },
];

/** One check of one scenario, as the suite writes it to checks.json. */
interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  errorMessage?: string;
  description?: string;
}

/** A scenario's outcome: counts and the failing checks. */
export interface ScenarioResult {
  scenario: string;
  passed: number;
  failed: { id: string; message: string }[];
  skipped: number;
}

/** Runs the suite of `era` against `url`; results per scenario (the CLI's own exit code is ignored: we judge). */
export function runSuite(era: Era, url: string, outDir: string): ScenarioResult[] {
  const cli = join(NODE22_DIR, 'node_modules', era.pkg, 'dist', 'index.js');
  const runs = [era.select, ...era.extra.map((s) => ['--scenario', s])];
  for (const select of runs) {
    const r = spawnSync(NODE22, [cli, 'server', '--url', url, ...select, '-o', outDir], {
      encoding: 'utf8',
      timeout: 10 * 60_000,
    });
    if (r.error) throw r.error;
  }
  return readResults(outDir);
}

function readResults(outDir: string): ScenarioResult[] {
  const results: ScenarioResult[] = [];
  for (const dir of readdirSync(outDir).sort()) {
    const m = /^server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$/.exec(dir);
    if (!m) continue;
    const checks = JSON.parse(readFileSync(join(outDir, dir, 'checks.json'), 'utf8')) as Check[];
    results.push({
      scenario: m[1]!,
      passed: checks.filter((c) => c.status === 'SUCCESS').length,
      failed: checks
        .filter((c) => c.status === 'FAILURE')
        .map((c) => ({ id: c.id, message: c.errorMessage ?? c.description ?? '' })),
      skipped: checks.filter((c) => c.status === 'SKIPPED').length,
    });
  }
  return results;
}
