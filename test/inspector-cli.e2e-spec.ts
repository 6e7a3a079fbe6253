import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startExecutor, type RunningExecutor } from './support/executor-process';
import { ensureNode22Tools, NODE22, NODE22_DIR } from './support/node22';
import { ROOT } from './support/paths';

const INSPECTOR = join(
  NODE22_DIR,
  'node_modules',
  '@modelcontextprotocol',
  'inspector',
  'clients',
  'launcher',
  'build',
  'index.js',
);
const DEMO = join(ROOT, 'examples', 'servers', 'demo');

describe('the official MCP Inspector CLI against the demo executor', () => {
  let ex: RunningExecutor;
  let home: string;
  beforeAll(async () => {
    ensureNode22Tools();
    home = mkdtempSync(join(tmpdir(), 'stoa-inspector-')); // the Inspector keeps ~/.mcp-inspector state
    ex = await startExecutor({
      config: { tools: { manifest: join(DEMO, 'tools.yaml') }, skills: { dir: join(DEMO, 'skills') } },
    });
  });
  afterAll(async () => {
    await ex?.stop();
  });

  /** `mcp-inspector --cli <url> …` under Node 22; its stdout as JSON. */
  async function inspector(...args: string[]): Promise<Record<string, unknown>> {
    const { stdout } = await promisify(execFile)(NODE22, [INSPECTOR, '--cli', ex.mcpUrl, ...args], {
      timeout: 60_000,
      env: { ...process.env, HOME: home },
    });
    return JSON.parse(stdout) as Record<string, unknown>;
  }

  it('lists the tools and runs execute_demo_code', async () => {
    const listed = (await inspector('--method', 'tools/list')) as { tools: { name: string }[] };
    expect(listed.tools.map((t) => t.name)).toEqual(
      expect.arrayContaining(['execute_demo_code', 'demo_list_sessions', 'search_demo_tools']),
    );
    const called = (await inspector(
      '--method',
      'tools/call',
      '--tool-name',
      'execute_demo_code',
      '--tool-arg',
      'code=print(6 * 7)',
    )) as { content: { text: string }[]; isError?: boolean };
    expect(called.isError).toBeFalsy();
    expect(JSON.parse(called.content[0]!.text)).toMatchObject({ stdout: '42\n', success: true });
  });
});
