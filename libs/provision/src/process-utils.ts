/**
 * Child-process helpers shared by the builders and the sidecar manager: a bounded output tail,
 * PATH lookup, and `runCommand` (spawn, keep only the last few KB of output, heartbeat log lines).
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import type { Readable } from 'node:stream';

/** Keeps only the last `max` characters of a stream (tool output can be megabytes). */
export class TailBuffer {
  private buf = '';
  constructor(private readonly max = 4000) {}

  append(chunk: string): void {
    this.buf += chunk;
    if (this.buf.length > this.max * 2) this.buf = this.buf.slice(-this.max);
  }

  text(): string {
    return this.buf.slice(-this.max);
  }

  /** The last `n` lines, for error messages. */
  lines(n: number): string {
    return this.text().trimEnd().split('\n').slice(-n).join('\n');
  }

  /** Consumes `stream` into this tail (and optionally a second one). */
  follow(stream: Readable | null, also?: TailBuffer): void {
    stream?.setEncoding('utf8');
    stream?.on('data', (chunk: string) => {
      this.append(chunk);
      also?.append(chunk);
    });
  }
}

/** Full path of an executable: `name` if it contains a `/`, else the first match on PATH. */
export function findExecutable(name: string, env: NodeJS.ProcessEnv, cwd = process.cwd()): string | undefined {
  const candidates = name.includes('/')
    ? [isAbsolute(name) ? name : join(cwd, name)]
    : (env.PATH ?? '')
        .split(delimiter)
        .filter(Boolean)
        .map((dir) => join(dir, name));
  return candidates.find(isExecutableFile);
}

function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

export interface CommandResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Last ~4000 characters of each stream, and of both interleaved. */
  stdout: string;
  stderr: string;
  output: string;
}

export interface RunOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Short name of the step for heartbeat lines (`installing requirements`). */
  label?: string;
  log?: (msg: string) => void;
  heartbeatMs?: number;
}

/** Runs a command to completion; rejects only when it cannot be spawned (ENOENT, EACCES). */
export async function runCommand(file: string, args: readonly string[], opts: RunOptions): Promise<CommandResult> {
  const child = spawn(file, args, { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
  const out = new TailBuffer();
  const err = new TailBuffer();
  const both = new TailBuffer();
  out.follow(child.stdout, both);
  err.follow(child.stderr, both);
  const started = Date.now();
  const heartbeat = setInterval(
    () => opts.log?.(`${opts.label ?? file}: still running (${Math.round((Date.now() - started) / 1000)}s)`),
    opts.heartbeatMs ?? 30_000,
  );
  try {
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', (c, s) => resolve([c, s]));
    });
    return { code, signal, stdout: out.text(), stderr: err.text(), output: both.text() };
  } finally {
    clearInterval(heartbeat);
  }
}

/** Resolves after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
