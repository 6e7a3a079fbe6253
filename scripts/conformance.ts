/**
 * `npm run conformance`: the official MCP conformance suites (0.1.16 for 2025-11-25, 0.2.0-alpha.12 for
 * 2026-07-28 with the tasks and skills extension scenarios) against the conformance profile executor
 * (examples/servers/conformance) and a router, a gateway and a dispatcher in front of it. Prints one table per
 * era and fails on any failing check that scripts/conformance/baseline.yaml does not list, and on baseline
 * entries that no longer fail. Needs `npm run build` first (CI has run npm test, which builds).
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { type AppProcess, spawnApp } from '../test/support/app-process';
import { EXECUTOR_MAIN, ROOT } from '../test/support/paths';
import { freePort } from '../test/support/ports';
import { startDispatcher, startGateway, startRouter } from '../test/support/router-process';
import { judge, loadBaseline } from './conformance/baseline';
import { ensureNode22Tools } from '../test/support/node22';
import { ERAS, runSuite, type ScenarioResult } from './conformance/suite';

const PROFILE = join(ROOT, 'examples', 'servers', 'conformance');
const BASELINE = join(__dirname, 'conformance', 'baseline.yaml');
const KEY = 'conformance-session-key-0123456789abcdef';
const passthrough = { mode: 'passthrough', audience: 'dev' };

async function startProfile(work: string): Promise<AppProcess> {
  const config = parse(readFileSync(join(PROFILE, 'server.yaml'), 'utf8')) as Record<string, unknown>;
  const extensions = (config.mcp_extensions as string[]).map((f) => join(PROFILE, f));
  const sessions = { ...(config.sessions as object), replica: 'conformance-a', id_signing_key: KEY };
  const file = join(work, 'server.yaml');
  const data_dir = join(work, 'data');
  // Paths of the profile stay relative to it (the copy runs from a temp dir).
  const tools = {
    ...(config.tools as object),
    manifest: join(PROFILE, (config.tools as { manifest: string }).manifest),
  };
  const skills = { ...(config.skills as object), dir: join(PROFILE, (config.skills as { dir: string }).dir) };
  writeFileSync(file, stringify({ ...config, data_dir, sessions, tools, skills, mcp_extensions: extensions }));
  return spawnApp({ what: 'executor', main: EXECUTOR_MAIN, configFile: file, port: await freePort() });
}

/** The executor and the three connectors in front of it (one after another: 2 cores). */
async function startTargets(work: string): Promise<[string, AppProcess][]> {
  const executor = await startProfile(work);
  const upstream = { name: 'conformance', url: executor.mcpUrl, auth: passthrough };
  const targets: [string, AppProcess][] = [['executor', executor]];
  try {
    targets.push(['router', await startRouter({ upstreams: [upstream] })]);
    targets.push(['gateway', await startGateway({ upstream })]);
    const workers = [{ name: 'w1', url: executor.url }];
    targets.push(['dispatcher', await startDispatcher({ workers, worker_auth: passthrough, session_key: KEY })]);
  } catch (err) {
    await Promise.all(targets.map(([, p]) => p.stop()));
    throw err;
  }
  return targets;
}

function cell(r: ScenarioResult | undefined, accepted: (check: string) => boolean): string {
  if (!r) return '—';
  const total = r.passed + r.failed.length;
  // Skipped checks (an extension the server does not declare) prove nothing: the cell says how many.
  const skipped = r.skipped ? ` (${r.skipped} skipped)` : '';
  if (!r.failed.length) return total ? `✓ ${r.passed}/${total}${skipped}` : r.skipped ? 'skipped' : '✓ 0/0';
  return `${r.failed.every((f) => accepted(f.id)) ? '≈' : '✗'} ${r.passed}/${total}${skipped}`;
}

function printTable(era: string, targets: string[], results: Map<string, ScenarioResult[]>, ok: Set<string>): void {
  const scenarios = [...new Set(targets.flatMap((t) => (results.get(`${t}/${era}`) ?? []).map((r) => r.scenario)))];
  const rows = scenarios.map((s) => [
    s,
    ...targets.map((t) =>
      cell(
        results.get(`${t}/${era}`)?.find((r) => r.scenario === s),
        (check) => ok.has(`${t}/${era}/${s}:${check}`),
      ),
    ),
  ]);
  const head = ['scenario', ...targets];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  console.log(`\n### ${era} (✓ passed · ≈ failing checks all baselined · ✗ unexpected failure)\n`);
  console.log([line(head), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n'));
}

async function main(): Promise<number> {
  ensureNode22Tools();
  const baseline = loadBaseline(BASELINE);
  const work = mkdtempSync(join(tmpdir(), 'stoa-conformance-'));
  const targets = await startTargets(work);
  const results = new Map<string, ScenarioResult[]>();
  try {
    for (const [name, app] of targets)
      for (const era of ERAS) {
        const started = Date.now();
        results.set(`${name}/${era.name}`, runSuite(era, app.mcpUrl, join(work, 'results', name, era.name)));
        console.log(`${name} ${era.name}: ${((Date.now() - started) / 1000).toFixed(1)} s`);
      }
  } finally {
    await Promise.all(targets.map(([, p]) => p.stop()));
  }
  const verdict = judge(results, baseline);
  for (const era of ERAS)
    printTable(
      era.name,
      targets.map(([n]) => n),
      results,
      verdict.accepted,
    );
  console.log(`\nresults (checks.json per scenario): ${join(work, 'results')}`);
  for (const f of verdict.unexpected) console.log(`UNEXPECTED FAILURE ${f}`);
  for (const s of verdict.stale) console.log(`STALE BASELINE ENTRY ${s}: it no longer fails; remove it`);
  if (verdict.unexpected.length || verdict.stale.length) {
    console.log(
      `\nconformance: ${verdict.unexpected.length} unexpected failure(s), ${verdict.stale.length} stale entr(ies) in ${BASELINE}`,
    );
    return 1;
  }
  console.log(`\nconformance: every failing check is in ${BASELINE} with its reason`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
