import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AppProcess, spawnApp } from './app-process';
import { ROOT } from './paths';
import { freePort } from './ports';

/** An embedding's program (a .ts file importing 'stoa') on a real port, with its own data directory. */
export interface RunningEmbedded extends AppProcess {
  dir: string;
}

/**
 * Runs `file` with tsx (it imports the built package entry); PORT and STOA_DATA_DIR point it at a free port and
 * a temp dir, `env(dir)` adds variables naming places in that dir.
 */
export async function startEmbedded(
  file: string,
  env: (dir: string) => Record<string, string> = () => ({}),
): Promise<RunningEmbedded> {
  const dir = mkdtempSync(join(tmpdir(), 'stoa-embed-'));
  const port = await freePort();
  const app = await spawnApp({
    what: file,
    port,
    argv: ['--import', 'tsx', join(ROOT, file)],
    // tsx compiles the program, then the whole package entry loads (every app's modules): slower than a built main.js.
    readyTimeoutMs: 120_000,
    env: { PORT: String(port), STOA_DATA_DIR: join(dir, 'data'), ...env(dir) },
  });
  return { ...app, dir };
}
