import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import type { ScenarioResult } from './suite';

/** One accepted failure: `targets/era/scenario[:check]`; targets is a comma list or `*` (all). */
interface Entry {
  id: string;
  reason: string;
}

export interface Judged {
  /** Failures no baseline entry covers. */
  unexpected: string[];
  /** Entries that matched no failure (fixed: remove them). */
  stale: string[];
  /** Failures a baseline entry covers. */
  accepted: Set<string>;
}

export function loadBaseline(file: string): Entry[] {
  const doc = parse(readFileSync(file, 'utf8')) as { failures?: Entry[] };
  const entries = doc.failures ?? [];
  for (const e of entries) {
    if (typeof e.id !== 'string' || !/^[^/]+\/[^/]+\/[^/]+$/.test(e.id))
      throw new Error(`${file}: entry ${JSON.stringify(e)} needs id: target/era/scenario[:check]`);
    if (typeof e.reason !== 'string' || !e.reason.trim()) throw new Error(`${file}: ${e.id} needs a reason`);
  }
  return entries;
}

function matches(pattern: string, id: string): boolean {
  const [targets, era, scenario] = pattern.split('/') as [string, string, string];
  const [target, failedEra, failed] = id.split('/') as [string, string, string];
  return (
    (targets === '*' || targets.split(',').includes(target)) &&
    era === failedEra &&
    (scenario === failed || (!scenario.includes(':') && failed.startsWith(`${scenario}:`)))
  );
}

/** Compares failures (`target/era/scenario:check`) with the baseline. */
export function judge(results: Map<string, ScenarioResult[]>, entries: Entry[]): Judged {
  const failures: string[] = [];
  for (const [key, list] of results)
    for (const r of list) for (const f of r.failed) failures.push(`${key}/${r.scenario}:${f.id}`);
  const used = new Set<string>();
  const accepted = new Set<string>();
  const unexpected: string[] = [];
  for (const f of failures) {
    const hit = entries.find((e) => matches(e.id, f));
    if (hit) {
      used.add(hit.id);
      accepted.add(f);
    } else unexpected.push(f);
  }
  return { unexpected, stale: entries.filter((e) => !used.has(e.id)).map((e) => e.id), accepted };
}
