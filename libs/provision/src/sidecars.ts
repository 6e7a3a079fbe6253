/**
 * Sidecars (reference §10.1): helper HTTP services started before kernels, each in its own
 * process group, on a loopback port. A sidecar is ready when `GET {base_url}{health_path}`
 * answers 2xx; the caller exports the returned `url_env_var → base_url` map to kernels.
 * Unlike the reference, the caller passes `baseEnv` (a scrubbed env, not the server's secrets)
 * and owns exporting the URLs. Only a bounded tail of each sidecar's output is kept.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { BlockList, isIP } from 'node:net';
import { z } from 'zod';
import { boolish } from '@stoa/config';
import { settlesWithin } from '@stoa/core';
import { SidecarStartError } from './provision.errors';
import { findExecutable, sleep, TailBuffer } from './process-utils';

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

function loopbackProblem(host: string): string | undefined {
  if (host.toLowerCase() === 'localhost') return undefined;
  const family = isIP(host);
  if (family === 0) return `Sidecar host must be a loopback IP address or 'localhost' (got '${host}'); use 127.0.0.1`;
  if (!LOOPBACK.check(host, family === 4 ? 'ipv4' : 'ipv6')) {
    return `Sidecar host must be loopback (got '${host}'); sidecars serve only the kernels on this machine, so use 127.0.0.1 or ::1`;
  }
  return undefined;
}

/** One entry of `environment.sidecars` (the reference's SidecarConfig). */
export const sidecarSchema = z.strictObject({
  name: z.string().min(1),
  command: z
    .array(z.string().min(1))
    .min(1, 'command needs at least the program (or, with use_env_python, the script)'),
  /** Prepend the kernel environment's interpreter to `command`. */
  use_env_python: boolish.default(true),
  /** Variable that receives `base_url` in every kernel. */
  url_env_var: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'url_env_var must be a valid environment variable name'),
  host: z
    .string()
    .default('127.0.0.1')
    .superRefine((host, ctx) => {
      const problem = loopbackProblem(host);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    }),
  port: z.coerce.number().int().min(1).max(65535),
  health_path: z
    .string()
    .default('/health')
    .transform((p) => (p.startsWith('/') ? p : `/${p}`)),
  readiness_timeout_s: z.coerce.number().positive().default(120),
  env: z.record(z.string(), z.string()).default({}),
});
export type SidecarSpec = z.output<typeof sidecarSchema>;

/** The `sidecars:` list; names must be unique. */
export const sidecarListSchema = z
  .array(sidecarSchema)
  .default([])
  .superRefine((specs, ctx) => {
    const dup = firstDuplicate(specs);
    if (dup)
      ctx.addIssue({ code: 'custom', message: `Duplicate sidecar name '${dup}'; give every sidecar a unique name` });
  });

/** `http://{host}:{port}` (IPv6 literals bracketed). */
export function sidecarBaseUrl(spec: Pick<SidecarSpec, 'host' | 'port'>): string {
  return `http://${spec.host.includes(':') ? `[${spec.host}]` : spec.host}:${spec.port}`;
}

export interface SidecarStartOptions {
  /** Interpreter of the kernel environment (prepended when use_env_python). */
  python: string;
  /** Environment of every sidecar before its own `env` (PATH is looked up here). */
  baseEnv: Record<string, string>;
  cwd: string;
  pollIntervalMs?: number;
}

interface Running {
  spec: SidecarSpec;
  child: ChildProcess;
  /** Resolves with `code N` / `signal S` / `error …` when the process is gone. */
  exit: Promise<string>;
  exited?: string;
  stderr: TailBuffer;
  stopping: boolean;
}

const HEALTH_REQUEST_TIMEOUT_MS = 5000;
const STOP_WAIT_MS = 10_000;

/** Starts sidecars in order, waits for each to be healthy, and stops them as process groups. */
export class SidecarManager {
  private running: Running[] = [];

  constructor(private readonly log: (msg: string) => void = () => undefined) {}

  /** Starts `specs`; on any failure stops the ones this call started and throws. Returns url_env_var → base_url. */
  async start(specs: readonly SidecarSpec[], opts: SidecarStartOptions): Promise<Record<string, string>> {
    const dup = firstDuplicate([...this.running.map((r) => r.spec), ...specs]);
    if (dup) throw new SidecarStartError(`Duplicate sidecar name '${dup}'; give every sidecar a unique name.`);
    const urls: Record<string, string> = {};
    const started: Running[] = [];
    try {
      for (const spec of specs) {
        const sidecar = this.spawn(spec, opts);
        started.push(sidecar);
        this.running.push(sidecar);
        await waitReady(sidecar, opts.pollIntervalMs ?? 1000);
        urls[spec.url_env_var] = sidecarBaseUrl(spec);
        this.log(`sidecar '${spec.name}' ready at ${sidecarBaseUrl(spec)}`);
      }
    } catch (err) {
      for (const sidecar of started.reverse()) await this.stopOne(sidecar);
      throw err;
    }
    return urls;
  }

  /** SIGTERM to each group, up to 10 s, then SIGKILL; a group that survives that stays tracked. */
  async stop(): Promise<void> {
    for (const sidecar of [...this.running].reverse()) await this.stopOne(sidecar);
  }

  private spawn(spec: SidecarSpec, opts: SidecarStartOptions): Running {
    const argv = spec.use_env_python ? [opts.python, ...spec.command] : [...spec.command];
    const program = argv[0] ?? '';
    const exe = findExecutable(program, opts.baseEnv, opts.cwd);
    if (!exe) {
      throw new SidecarStartError(
        spec.use_env_python
          ? `Sidecar '${spec.name}' requires the kernel environment Python at ${program}, which was not found; build the environment first or set use_env_python: false.`
          : `Sidecar '${spec.name}' cannot start: '${program}' is not an executable path nor on PATH; fix its command.`,
      );
    }
    const env = { ...opts.baseEnv, ...spec.env, SIDECAR_HOST: spec.host, SIDECAR_PORT: String(spec.port) };
    this.log(`starting sidecar '${spec.name}': ${argv.join(' ')}`);
    const child = spawn(exe, argv.slice(1), { cwd: opts.cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const stderr = new TailBuffer();
    new TailBuffer(1000).follow(child.stdout); // drained so the sidecar never blocks on a full pipe
    stderr.follow(child.stderr);
    const sidecar: Running = { spec, child, stderr, stopping: false, exit: Promise.resolve('') };
    sidecar.exit = new Promise<string>((resolve) => {
      child.once('error', (e) => resolve(`error ${e.message}`));
      child.once('exit', (code, signal) => resolve(code !== null ? `code ${code}` : `signal ${signal}`));
    }).then(async (how) => {
      sidecar.exited = how;
      await settlesWithin(new Promise((r) => child.once('close', r)), 200); // let the last stderr lines arrive
      if (!sidecar.stopping) this.log(`sidecar '${spec.name}' exited (${how})`);
      return how;
    });
    return sidecar;
  }

  private async stopOne(sidecar: Running): Promise<void> {
    sidecar.stopping = true;
    const pid = sidecar.child.pid;
    if (pid !== undefined && groupAlive(pid)) {
      signalGroup(pid, 'SIGTERM');
      if (!(await groupGone(pid, STOP_WAIT_MS))) {
        signalGroup(pid, 'SIGKILL');
        if (!(await groupGone(pid, STOP_WAIT_MS))) {
          this.log(`sidecar '${sidecar.spec.name}' (process group ${pid}) survived SIGKILL; still tracked`);
          return;
        }
      }
    }
    await settlesWithin(sidecar.exit, 1000);
    this.running = this.running.filter((r) => r !== sidecar);
  }
}

async function waitReady(sidecar: Running, pollMs: number): Promise<void> {
  const { spec } = sidecar;
  const url = sidecarBaseUrl(spec) + spec.health_path;
  const deadline = Date.now() + spec.readiness_timeout_s * 1000;
  let lastError = 'no answer yet';
  for (;;) {
    if (sidecar.exited !== undefined) {
      const how = sidecar.exited.startsWith('error') ? `an ${sidecar.exited}` : sidecar.exited;
      throw new SidecarStartError(
        `Sidecar '${spec.name}' exited during startup with ${how} before its health endpoint became ready.${stderrLines(sidecar)}`,
        { sidecar: spec.name },
      );
    }
    const remaining = deadline - Date.now();
    if (remaining <= 0) {
      throw new SidecarStartError(
        `Sidecar '${spec.name}' did not become ready at ${url} within ${spec.readiness_timeout_s}s (last error: ${lastError}); ` +
          `check that it listens on SIDECAR_HOST:SIDECAR_PORT (${spec.host}:${spec.port}) and answers 2xx on ${spec.health_path}, or raise readiness_timeout_s.` +
          stderrLines(sidecar),
        { sidecar: spec.name },
      );
    }
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(Math.min(HEALTH_REQUEST_TIMEOUT_MS, remaining)) });
      await res.body?.cancel();
      if (res.ok) return;
      lastError = `HTTP ${res.status}`;
    } catch (err) {
      const e = err as Error & { cause?: { code?: string } };
      lastError = e.name === 'TimeoutError' ? 'health request timed out' : (e.cause?.code ?? e.message);
    }
    await settlesWithin(sidecar.exit, Math.max(0, Math.min(pollMs, deadline - Date.now())));
  }
}

function stderrLines(sidecar: Running): string {
  const tail = sidecar.stderr.lines(20);
  return tail ? `\nLast stderr lines:\n${tail}` : '';
}

function firstDuplicate(specs: readonly Pick<SidecarSpec, 'name'>[]): string | undefined {
  const seen = new Set<string>();
  for (const { name } of specs) {
    if (seen.has(name)) return name;
    seen.add(name);
  }
  return undefined;
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // Already gone.
  }
}

async function groupGone(pgid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (groupAlive(pgid)) {
    if (Date.now() >= deadline) return false;
    await sleep(50); // no event for a whole process group; poll
  }
  return true;
}
