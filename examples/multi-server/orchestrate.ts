/* eslint-disable no-console -- a command-line example: printing is its job */
/**
 * One MultiServerSession over the demo and science executors: prints each server's state, the merged
 * catalog, then runs code on both at once.
 *
 *   npx tsx examples/multi-server/orchestrate.ts http://127.0.0.1:8000 http://127.0.0.1:8001
 */
import { MultiServerSession, type CallToolResult, type SessionTool } from '@stoa/client';

const [demoUrl = 'http://127.0.0.1:8000', scienceUrl = 'http://127.0.0.1:8001'] = process.argv.slice(2);

/** What to run on each server (the science executor has numpy). */
const SNIPPETS: Record<string, string> = {
  demo: '1+1',
  science: 'import numpy as np\nfloat(np.mean([1, 2, 3, 4]))',
};

async function main(): Promise<void> {
  const session = await MultiServerSession.connect([
    { name: 'demo', url: demoUrl },
    { name: 'science', url: scienceUrl },
  ]);
  session.on('serverDown', ({ server, error }) => console.log(`! ${server} went down: ${error}`));
  session.on('serverUp', ({ server }) => console.log(`! ${server} is back`));
  try {
    console.log('Servers:');
    for (const [name, s] of Object.entries(session.status())) {
      console.log(`  ${name.padEnd(8)} ${s.state.padEnd(12)} ${s.url}${s.lastError ? `  (${s.lastError})` : ''}`);
    }
    const tools = session.listTools();
    console.log(`\nMerged catalog (${tools.length} tools):`);
    for (const t of tools) console.log(`  ${t.qualifiedName.padEnd(36)} ${firstLine(t.description)}`);

    // Each executor names its code tool execute_<name>_code; find it in the catalog rather than guess.
    const runs = Object.entries(SNIPPETS).map(async ([server, code]) => {
      const tool = tools.find((t) => t.server === server && /^execute_.+_code$/.test(t.name));
      if (!tool) return `${server}: not available, skipped`;
      return `${tool.qualifiedName} ${JSON.stringify(code)} → ${summarize(await session.callTool(tool.qualifiedName, { code }))}`;
    });
    console.log('\nResults:');
    for (const line of await Promise.all(runs)) console.log(`  ${line}`);
    if (!tools.length) process.exitCode = 1;
  } finally {
    await session.close();
  }
}

function firstLine(text: SessionTool['description']): string {
  const line = (text ?? '').split('\n')[0] ?? '';
  return line.length > 70 ? `${line.slice(0, 67)}...` : line;
}

/** The executors answer with JSON text: `{ stdout, stderr, success, error, … }`. */
function summarize(result: CallToolResult): string {
  const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
  try {
    const out = JSON.parse(text) as { stdout?: string; error?: unknown; success?: boolean };
    return out.success ? `stdout ${JSON.stringify(out.stdout)}` : `failed: ${JSON.stringify(out.error)}`;
  } catch {
    return text;
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
});
