import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { InvalidInputError, Mutex, type Principal } from '@stoa/core';
import { KernelService, type KernelDirs, type KernelProcess } from '@stoa/kernel';
import { SessionClosedError, SessionExpiredError, SessionLimitError, SessionNotFoundError } from './session.errors';
import { SessionIdCodec } from './session-id';
import { SessionRepository } from './session.repository';
import { SessionStatus, type SessionFilter, type SessionRecord } from './session.types';

/** Longer than any session id a Stoa server issues (`s-{random}.{replica, base64url}`); longer ones are unknown without a lookup. */
const MAX_SESSION_ID_CHARS = 256;

/** What the session service needs from config. */
export interface SessionSettings {
  maxSessions: number;
  idleTimeoutMs: number;
  sweepIntervalMs: number;
  dataDir: string;
  replica: string;
  idSigningKey?: string;
}
export const SESSION_SETTINGS = Symbol('SESSION_SETTINGS');

/** A live session on this replica: its record, directories, kernel and execution lock. */
export interface SessionRuntime {
  record: SessionRecord;
  /** The session's directories (work/, outputs/) and the uid its kernels run as. */
  readonly dirs: KernelDirs;
  readonly workDir: string;
  readonly outputDir: string;
  kernel?: KernelProcess;
  /** The kernel has been given this session's identity (pooled kernels start anonymous). */
  assigned?: boolean;
  /** Set when the previous kernel ended abnormally; the next start reports it once. */
  lostState?: string;
  /** Serialises executions in this session. */
  readonly lock: Mutex;
  /** A background job currently running in this session (others get the busy error). */
  busyJob?: string;
}

const TOUCH_DB_EVERY_MS = 10_000;

/** Session lifecycle and ownership. Every lookup is scoped to the caller's principal. */
@Injectable()
export class SessionService implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(SessionService.name);
  private readonly live = new Map<string, SessionRuntime>();
  private readonly lastDbTouch = new Map<string, number>();
  readonly ids: SessionIdCodec;
  private sweeper?: NodeJS.Timeout;

  constructor(
    @Inject(SESSION_SETTINGS) private readonly settings: SessionSettings,
    private readonly repo: SessionRepository,
    private readonly kernels: KernelService,
  ) {
    this.ids = new SessionIdCodec(settings.replica, settings.idSigningKey);
  }

  async onModuleInit(): Promise<void> {
    const n = await this.repo.endAllOfReplica(
      this.settings.replica,
      SessionStatus.expired,
      'the executor restarted',
      Date.now(),
    );
    if (n) this.logger.log({ count: n, replica: this.settings.replica }, 'sessions from a previous run marked expired');
    this.sweeper = setInterval(() => void this.sweep(), this.settings.sweepIntervalMs);
    this.sweeper.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.sweeper);
    const ids = [...this.live.keys()];
    await Promise.all(
      [...this.live.values()].map(async (rt) => {
        await rt.kernel?.close();
        await this.kernels.releaseDirs(rt.dirs);
      }),
    );
    this.live.clear();
    await this.repo.end(ids, SessionStatus.expired, 'the executor shut down', Date.now()).catch(() => undefined);
  }

  /** Creates a session owned by `principal` (with a given id for legacy MCP transports). */
  async create(principal: Principal, metadata: Record<string, unknown>, id?: string): Promise<SessionRuntime> {
    if (this.live.size >= this.settings.maxSessions) throw new SessionLimitError(this.settings.maxSessions);
    const sid = id ?? this.ids.mint();
    const now = Date.now();
    // A warm kernel brings its directories; otherwise directories now and the kernel on first use.
    const warm = this.kernels.takeWarm();
    const dirs = warm?.dirs ?? this.kernels.allocateDirs();
    const runtime: SessionRuntime = {
      record: {
        id: sid,
        owner: principal.id,
        status: SessionStatus.active,
        replica: this.settings.replica,
        createdAt: now,
        lastUsedAt: now,
        endedAt: null,
        endReason: null,
        metadata,
      },
      dirs,
      workDir: dirs.workDir,
      outputDir: dirs.outputDir,
      kernel: warm?.kernel,
      lock: new Mutex(),
    };
    this.live.set(sid, runtime); // reserve before any await: the cap stays exact under concurrency
    try {
      await this.repo.insert(runtime.record);
    } catch (err) {
      this.live.delete(sid);
      await runtime.kernel?.close();
      await this.kernels.releaseDirs(dirs);
      throw err;
    }
    return runtime;
  }

  /** The caller's live session, or the error the caller should see (foreign ids look unknown). */
  async get(principal: Principal, id: string): Promise<SessionRuntime> {
    if (!id) throw new InvalidInputError('execution_session_id must be a non-empty session id.');
    const runtime = this.live.get(id);
    if (runtime && runtime.record.owner === principal.id) return runtime;
    // An id longer than any this server issues is not looked up (a 3 MB id would be encoded and bound for SQL).
    const record = runtime || id.length > MAX_SESSION_ID_CHARS ? undefined : await this.repo.findById(id);
    if (record && record.owner === principal.id) {
      if (record.status === SessionStatus.closed) throw new SessionClosedError(id);
      throw new SessionExpiredError(id, record.endReason);
    }
    throw new SessionNotFoundError(id, this.countLive(principal));
  }

  /** The caller's live session with this id, or undefined (no error, no DB lookup). */
  find(principal: Principal, id: string): SessionRuntime | undefined {
    const runtime = this.live.get(id);
    return runtime && runtime.record.owner === principal.id ? runtime : undefined;
  }

  /** A live session by id whatever its owner — only for callers that check ownership themselves (signed links). */
  peek(id: string): SessionRuntime | undefined {
    return this.live.get(id);
  }

  /** True when a live session with this id exists on this replica, whoever owns it. */
  isLive(id: string): boolean {
    return this.live.has(id);
  }

  /** The caller's live sessions, oldest first. */
  list(principal: Principal): SessionRuntime[] {
    return [...this.live.values()].filter((rt) => rt.record.owner === principal.id);
  }

  countLive(principal: Principal): number {
    let n = 0;
    for (const rt of this.live.values()) if (rt.record.owner === principal.id) n++;
    return n;
  }

  /** Records from the database (admin view); includes ended sessions. */
  async listRecords(filter: SessionFilter): Promise<SessionRecord[]> {
    return this.repo.list(filter);
  }

  /** Closes the caller's session; returns false when it was not theirs or not live. */
  async close(principal: Principal, id: string): Promise<boolean> {
    const runtime = this.find(principal, id);
    if (!runtime) return false;
    await this.end(runtime, SessionStatus.closed, 'closed by its owner');
    return true;
  }

  /** Closes any live session (admin). */
  async closeAny(id: string, reason: string): Promise<boolean> {
    const runtime = this.live.get(id);
    if (!runtime) return false;
    await this.end(runtime, SessionStatus.closed, reason);
    return true;
  }

  /** Marks use: keeps the session from idle expiry. */
  touch(runtime: SessionRuntime): void {
    const now = Date.now();
    runtime.record.lastUsedAt = now;
    if (now - (this.lastDbTouch.get(runtime.record.id) ?? 0) >= TOUCH_DB_EVERY_MS) {
      this.lastDbTouch.set(runtime.record.id, now);
      void this.repo
        .touch(runtime.record.id, now)
        .catch((err: Error) => this.logger.warn({ err: err.message }, 'touch failed'));
    }
  }

  /** The session's kernel, started on demand. Call while holding `runtime.lock`. */
  async kernelFor(runtime: SessionRuntime): Promise<{ kernel: KernelProcess; fresh: boolean }> {
    let fresh = false;
    if (!runtime.kernel?.alive) {
      runtime.kernel = await this.kernels.start(runtime.dirs);
      runtime.assigned = false;
      fresh = true;
    }
    if (!runtime.assigned) {
      runtime.kernel.assign({ USER_IDENTITY: runtime.record.owner, STOA_SESSION_ID: runtime.record.id });
      runtime.assigned = true;
    }
    return { kernel: runtime.kernel, fresh };
  }

  /** Expires sessions idle longer than the configured timeout (skipping busy ones). */
  async sweep(now = Date.now()): Promise<number> {
    if (this.settings.idleTimeoutMs <= 0) return 0;
    const idle = [...this.live.values()].filter(
      (rt) => rt.lock.pending === 0 && now - rt.record.lastUsedAt > this.settings.idleTimeoutMs,
    );
    await Promise.all(idle.map((rt) => this.end(rt, SessionStatus.expired, 'idle timeout')));
    return idle.length;
  }

  private async end(runtime: SessionRuntime, status: SessionStatus, reason: string): Promise<void> {
    const id = runtime.record.id;
    this.live.delete(id);
    this.lastDbTouch.delete(id);
    runtime.record.status = status;
    await runtime.kernel?.close();
    await this.repo.end([id], status, reason, Date.now());
    await this.kernels.releaseDirs(runtime.dirs);
  }
}
