import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { type AppProcess, spawnApp } from './app-process';
import { ROOT } from './paths';
import { runPyClient } from './py-client';
import { freePort } from './ports';

/** Built square entry. */
export const SQUARE_MAIN = join(ROOT, 'dist', 'apps', 'square', 'main.js');

/** Starts `node dist/apps/square/main.js` with a config (data dir in a temp dir unless given) on a free port. */
export async function startSquare(
  config: Record<string, unknown> = {},
  env: Record<string, string> = {},
): Promise<AppProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'stoa-square-'));
  const configFile = join(dir, 'square.yaml');
  writeFileSync(configFile, stringify({ data_dir: join(dir, 'data'), ...config }));
  return spawnApp({ what: 'square', main: SQUARE_MAIN, configFile, port: await freePort(), env });
}

export interface SquareAgentPlan {
  url?: string;
  stdio?: { command: string; args: string[]; env?: Record<string, string> };
  mode?: 'auto' | 'legacy';
  token?: string;
  name: string;
  channel?: string;
  posts?: number;
  expect?: number;
  calls?: { tool: string; args?: Record<string, unknown> }[];
}

export interface SquareAgentResult {
  agent_id: string;
  awaits: number;
  messages: [number, string][];
  calls: { text: string; is_error: boolean; json: Record<string, unknown> | null }[];
}

/** Runs one agent (test/clients/py_square_agent.py) through the real Python `mcp` client. */
export function pySquareAgent(plan: SquareAgentPlan): Promise<SquareAgentResult> {
  return runPyClient<SquareAgentResult>('py_square_agent.py', plan, `python square agent ${plan.name}`);
}
