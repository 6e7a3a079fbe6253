import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { ADMIN } from './admin';
import { ROOT, TEST_PYTHON } from './paths';

/** One metric family as the official Prometheus client parser reads it (`_total`, `_count`… in sample names). */
export interface MetricFamily {
  name: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'unknown';
  help: string;
  samples: { name: string; labels: Record<string, string>; value: number }[];
}

/** GET /metrics (as admin unless other headers are given), parsed by prometheus_client's text-format parser. */
export async function scrape(baseUrl: string, headers: Record<string, string> = ADMIN): Promise<MetricFamily[]> {
  const res = await fetch(`${baseUrl}/metrics`, { headers });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`/metrics answered ${res.status}: ${text}`);
  const type = res.headers.get('content-type') ?? '';
  if (!type.startsWith('text/plain; version=0.0.4')) throw new Error(`/metrics content-type ${type}`);
  const parsed = execFileSync(TEST_PYTHON, [join(ROOT, 'test', 'clients', 'prom_parse.py')], { input: text });
  return JSON.parse(parsed.toString()) as MetricFamily[];
}

/**
 * The value of sample `name` (e.g. `stoa_tool_calls_total`, `stoa_kernel_start_duration_seconds_count`) whose
 * labels include `labels`; 0 when there is none yet (a labelled counter appears with its first increment).
 */
export function sampleOf(families: MetricFamily[], name: string, labels: Record<string, string> = {}): number {
  const samples = families.flatMap((f) => f.samples).filter((s) => s.name === name);
  if (!samples.length && !families.some((f) => name.startsWith(f.name)))
    throw new Error(`no metric ${name} in /metrics`);
  const hit = samples.find((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return hit?.value ?? 0;
}
