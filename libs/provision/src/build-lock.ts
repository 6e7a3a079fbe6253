/**
 * Cross-process lock for one build directory: `{build_dir}.lock`, created with O_EXCL.
 * Environments are not relocatable (venv scripts and conda prefixes embed their path), so we
 * cannot build elsewhere and rename; instead builders of the same directory take turns.
 * The holder touches the lock every minute; a lock untouched for 30 minutes is stale (its
 * holder died) and is removed.
 */
import { closeSync, mkdirSync, openSync, rmSync, statSync, utimesSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import { EnvironmentBuildError } from './provision.errors';
import { sleep } from './process-utils';

export interface BuildLockOptions {
  log?: (msg: string) => void;
  staleMs?: number;
  pollMs?: number;
}

const STALE_MS = 30 * 60_000;
const HEARTBEAT_MS = 60_000;

/** Runs `fn` while holding the lock of `buildDir`, waiting for another holder to finish first. */
export async function withBuildLock<T>(
  buildDir: string,
  fn: () => Promise<T>,
  opts: BuildLockOptions = {},
): Promise<T> {
  const lock = `${buildDir}.lock`;
  try {
    mkdirSync(dirname(lock), { recursive: true });
    await acquire(lock, opts);
  } catch (err) {
    throw new EnvironmentBuildError(
      `Cannot take the build lock ${lock}: ${(err as Error).message}. Make sure its directory is writable (the data dir, or environment.build_dir).`,
      {},
      { cause: err },
    );
  }
  const heartbeat = setInterval(() => touch(lock), HEARTBEAT_MS);
  heartbeat.unref();
  try {
    return await fn();
  } finally {
    clearInterval(heartbeat);
    rmSync(lock, { force: true });
  }
}

async function acquire(lock: string, opts: BuildLockOptions): Promise<void> {
  const staleMs = opts.staleMs ?? STALE_MS;
  let announced = false;
  for (;;) {
    try {
      const fd = openSync(lock, 'wx');
      writeSync(fd, JSON.stringify({ pid: process.pid, host: hostname(), since: new Date().toISOString() }));
      closeSync(fd);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const age = lockAge(lock);
    if (age === undefined) continue; // released between open and stat
    if (age > staleMs) {
      opts.log?.(`removing stale build lock ${lock} (untouched for ${Math.round(age / 60_000)} min)`);
      rmSync(lock, { force: true });
      continue;
    }
    if (!announced) opts.log?.(`waiting for another process building the same environment (lock ${lock})`);
    announced = true;
    await sleep(opts.pollMs ?? 1000);
  }
}

function lockAge(lock: string): number | undefined {
  try {
    return Date.now() - statSync(lock).mtimeMs;
  } catch {
    return undefined;
  }
}

function touch(lock: string): void {
  const now = new Date();
  try {
    utimesSync(lock, now, now);
  } catch {
    // Removed by someone who thought it stale; the build carries on, nothing to repair here.
  }
}
