import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startExecutor, type RunningExecutor } from './support/executor-process';
import { ROOT } from './support/paths';
import { freePort } from './support/ports';

const SCRIPT = join(ROOT, 'examples', 'multi-server', 'orchestrate.ts');

/** Runs the example as its README does (`tsx`, resolving `@stoa/client` through tsconfig paths). */
async function orchestrate(...urls: string[]): Promise<{ code: number | null; out: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT, ...urls], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, out };
}

describe('examples/multi-server/orchestrate.ts over the @stoa/client session (real executors)', () => {
  let demo: RunningExecutor;
  let science: RunningExecutor;

  beforeAll(async () => {
    [demo, science] = await Promise.all([
      startExecutor({ config: { name: 'demo', sessions: { warm_pool: 0 } } }),
      startExecutor({ config: { name: 'science', sessions: { warm_pool: 0 } } }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([demo?.stop(), science?.stop()]);
  });

  it('lists both servers, merges their catalogs and runs code on both, then exits on its own', async () => {
    const { code, out } = await orchestrate(demo.url, science.url);
    expect(code, out).toBe(0);
    expect(out).toMatch(new RegExp(`demo +connected +${demo.mcpUrl}\\n`));
    expect(out).toMatch(new RegExp(`science +connected +${science.mcpUrl}\\n`));
    expect(out).toMatch(/^ {2}demo__execute_demo_code /m);
    expect(out).toMatch(/^ {2}science__execute_science_code /m);
    expect(out).toContain('demo__execute_demo_code "1+1" → stdout "2\\n"');
    expect(out).toMatch(/science__execute_science_code .* → stdout "2\.5\\n"/);
  });

  it('reports a server that is down with its reason and still runs code on the other', async () => {
    const down = `http://127.0.0.1:${await freePort()}`;
    const { code, out } = await orchestrate(demo.url, down);
    expect(code, out).toBe(0);
    expect(out).toMatch(new RegExp(`science +unavailable +${down}/mcp +\\(.*ECONNREFUSED.*\\)`));
    expect(out).toContain('science: not available, skipped');
    expect(out).toContain('demo__execute_demo_code "1+1" → stdout "2\\n"');
  });
});
