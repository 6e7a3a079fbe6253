import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from './support/paths';

const run = promisify(execFile);
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const PROGRAMS = [
  'examples/embedding/executor.ts',
  'examples/embedding/router.ts',
  'examples/embedding/governed.ts',
  'test/fixtures/guarded-executor.ts',
];

/**
 * A project outside this repository that depends on the package: no @stoa/* paths, its own tsconfig, `stoa` in its
 * node_modules. It sees only what package.json's exports name (the bundled dist/embed/index.d.ts).
 */
function consumerProject(files: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'stoa-consumer-'));
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(ROOT, join(dir, 'node_modules', 'stoa'), 'dir');
  symlinkSync(join(ROOT, 'node_modules', '@types'), join(dir, 'node_modules', '@types'), 'dir');
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'commonjs' }));
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        module: 'nodenext',
        moduleResolution: 'nodenext',
        target: 'ES2023',
        strict: true,
        noEmit: true,
        types: ['node'],
        skipLibCheck: false,
      },
      include: ['*.ts'],
    }),
  );
  for (const p of PROGRAMS) copyFileSync(join(ROOT, p), join(dir, basename(p)));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

async function typecheck(dir: string): Promise<{ code: number; out: string }> {
  try {
    await run(process.execPath, [TSC, '-p', dir], { cwd: dir });
    return { code: 0, out: '' };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, out: e.stdout + e.stderr };
  }
}

describe("the package's types, as a project outside this repository sees them", () => {
  beforeAll(async () => {
    await run('npm', ['run', '--silent', 'build:types'], { cwd: ROOT });
  }, 120_000);

  it('typechecks the embedding examples with only the package entry (no @stoa/* paths)', async () => {
    expect(await typecheck(consumerProject())).toEqual({ code: 0, out: '' });
  }, 120_000);

  it('catches a wrong config value and a wrong extension signature, naming them', async () => {
    const dir = consumerProject({
      'wrong.ts': [
        "import { createExecutor, type Publisher } from 'stoa';",
        "const broken: Publisher = { name: 'x', send: (item) => item.sizeBytes };",
        "void createExecutor({ name: 'x', sandbox: { network: 'internet' } }, { publishers: [broken] });",
      ].join('\n'),
    });
    const { code, out } = await typecheck(dir);
    expect(code).not.toBe(0);
    expect(out).toMatch(/wrong\.ts\(2,\d+\): error TS2322: .*'Promise<PublishOutcome>'/);
    expect(out).toMatch(
      /wrong\.ts\(3,\d+\): error TS2322: Type '"internet"' is not assignable to type '"none" \| "inherit"/,
    );
    // Nothing else fails: the examples beside it still typecheck.
    expect(out.split('\n').filter((l) => /error TS/.test(l) && !l.startsWith('wrong.ts'))).toEqual([]);
  }, 120_000);
});
