import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { appEntry } from './assets';
import { CliError } from './cli.errors';
import { withProgress } from './progress';

/**
 * Builds an executor's environment and fetches its assets (`main.js --warm`) with progress lines: each step the
 * executor logs (environment build, pip output, asset downloads, checksum checks) is shown as it happens.
 */
export async function warm(config: string): Promise<void> {
  const entry = appEntry('executor');
  await withProgress(`Warming ${config}`, (progress) => {
    const child = spawn(process.execPath, [entry, '--config', config, '--warm'], {
      env: { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const errors: string[] = [];
    createInterface({ input: child.stdout }).on('line', (line) => {
      const msg = logMessage(line);
      if (msg) progress.note(msg);
    });
    createInterface({ input: child.stderr }).on('line', (line) => errors.push(line));
    return new Promise<void>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (code) =>
        code === 0
          ? resolve()
          : reject(new CliError(errors.join('\n') || `the executor's --warm exited with ${code}: see the lines above`)),
      );
    });
  });
}

/** A pino JSON line's message (with its level when not info); other output as it is. */
function logMessage(line: string): string {
  try {
    const entry = JSON.parse(line) as { msg?: string; level?: number };
    if (!entry.msg) return '';
    return entry.level && entry.level >= 40 ? `${entry.level >= 50 ? 'ERROR' : 'WARN'} ${entry.msg}` : entry.msg;
  } catch {
    return line.trim();
  }
}
