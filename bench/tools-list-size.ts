/**
 * tools-list-size: how much of an agent's context the executor's `tools/list` takes. Every agent
 * reads the whole list before its first call, so each character is paid on every conversation.
 *
 * For the demo and science example catalogs, it starts (with the built executor):
 *   - `<server>`: `{name, tools: {manifest}, skills: {dir}}` with absolute paths (no description);
 *   - `<server>-example-yaml`: examples/servers/<server>/server.yaml as shipped (adds the server
 *     description, which the executor repeats in execute_<server>_code), paths made absolute;
 *   - `<server>-bare` (baseline): `{name}` only: no tools, no skills, no description.
 * It lists the tools with the TS SDK v2 client and measures `JSON.stringify(tools)` (compact), in
 * characters and ≈ tokens (chars / 4). stdout: one JSON line per executor and unit; stderr: the size
 * of each tool and of its description and inputSchema, biggest first.
 */
import { readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parse } from 'yaml';
import { type RunningExecutor, startExecutor } from '../test/support/executor-process';
import { ROOT } from '../test/support/paths';
import { emit, note, runBench, SMOKE } from './lib/bench';
import { connect } from './lib/mcp';

const BENCH = 'tools-list-size';
const GOAL_MAX_TOKENS = 2500;
const root = ROOT;

const tokens = (chars: number): number => Math.round(chars / 4);

function configs(server: string): Record<string, Record<string, unknown>> {
  const dir = join(root, 'examples', 'servers', server);
  const domain = { tools: { manifest: join(dir, 'tools.yaml') }, skills: { dir: join(dir, 'skills') } };
  // The shipped server.yaml, minus what the harness sets (data dir, port) and with absolute paths.
  const shipped = parse(readFileSync(join(dir, 'server.yaml'), 'utf8')) as Record<string, unknown>;
  delete shipped.data_dir;
  const server_ = { ...(shipped.server as Record<string, unknown> | undefined) };
  delete server_.port;
  const tools = { ...(shipped.tools as Record<string, unknown>), manifest: domain.tools.manifest };
  const skills = { ...(shipped.skills as Record<string, unknown>), dir: domain.skills.dir };
  return {
    [`${server}-bare`]: { name: server },
    [server]: { name: server, ...domain },
    [`${server}-example-yaml`]: { ...shipped, server: server_, tools, skills },
  };
}

interface Measured {
  chars: number;
  tools: Record<string, unknown>[];
}

async function measure(label: string, config: Record<string, unknown>): Promise<Measured> {
  let executor: RunningExecutor | undefined;
  try {
    executor = await startExecutor({ config });
    const client = await connect(executor.mcpUrl);
    try {
      const tools = await client.listTools();
      return { chars: JSON.stringify(tools).length, tools };
    } finally {
      await client.close();
    }
  } catch (err) {
    if (executor) note(`${label} executor logs:\n${executor.logs()}`);
    throw err;
  } finally {
    if (executor) {
      await executor.stop();
      rmSync(dirname(executor.dataDir), { recursive: true, force: true });
    }
  }
}

function breakdown(label: string, m: Measured): void {
  const rows = m.tools
    .map((t) => ({
      name: String(t.name),
      total: JSON.stringify(t).length,
      description: JSON.stringify(t.description ?? '').length,
      input: JSON.stringify(t.inputSchema ?? {}).length,
      output: t.outputSchema ? JSON.stringify(t.outputSchema).length : 0,
    }))
    .sort((a, b) => b.total - a.total);
  note(`${label}: ${m.tools.length} tools, ${m.chars} chars ≈ ${tokens(m.chars)} tokens`);
  // Boilerplate the schema generator adds to every tool (not chosen by the executor's authors).
  const json = JSON.stringify(m.tools);
  const schemaKeys = json.match(/"\$schema":"[^"]*",?/g) ?? [];
  const intBounds = json.match(/,?"minimum":-9007199254740991,"maximum":9007199254740991/g) ?? [];
  const boiler = [...schemaKeys, ...intBounds].reduce((n, s) => n + s.length, 0);
  if (boiler)
    note(
      `  boilerplate: ${schemaKeys.length} × "$schema" + ${intBounds.length} × safe-integer min/max = ${boiler} chars ≈ ${tokens(boiler)} tokens`,
    );
  for (const r of rows) {
    note(
      `  ${r.name.padEnd(28)} ${String(r.total).padStart(6)} chars (${((100 * r.total) / m.chars).toFixed(0).padStart(2)} %)  description ${r.description}  inputSchema ${r.input}${r.output ? `  outputSchema ${r.output}` : ''}`,
    );
  }
}

async function main(): Promise<void> {
  for (const server of SMOKE ? ['demo'] : ['demo', 'science']) {
    const results: Record<string, Measured> = {};
    for (const [label, config] of Object.entries(configs(server))) {
      note(`starting ${label}`);
      results[label] = await measure(label, config);
      breakdown(label, results[label]);
    }
    const base = results[`${server}-bare`] as Measured;
    for (const [label, m] of Object.entries(results)) {
      const isBase = label === `${server}-bare`;
      const extra = (value: number, baseValue: number, goal?: number): Record<string, unknown> =>
        isBase
          ? {}
          : {
              baseline: `${server}-bare`,
              ratio: Number((value / baseValue).toFixed(3)),
              added: value - baseValue,
              ...(goal ? { goal_max: goal } : {}),
            };
      emit({
        bench: BENCH,
        subject: label,
        metric: 'chars',
        value: m.chars,
        n: m.tools.length,
        ...extra(m.chars, base.chars),
      });
      emit({
        bench: BENCH,
        subject: label,
        metric: 'tokens_approx',
        value: tokens(m.chars),
        n: m.tools.length,
        ...extra(tokens(m.chars), tokens(base.chars), GOAL_MAX_TOKENS),
      });
    }
  }
}

runBench(BENCH, main);
