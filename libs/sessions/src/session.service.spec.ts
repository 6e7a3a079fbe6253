import { beforeEach, describe, expect, it } from 'vitest';
import { InvalidInputError, type Principal } from '@stoa/core';
import type { KernelDirs, KernelService } from '@stoa/kernel';
import { SessionClosedError, SessionExpiredError, SessionLimitError, SessionNotFoundError } from './session.errors';
import type { SessionRepository } from './session.repository';
import { SessionService, type SessionSettings } from './session.service';
import { SessionStatus, type SessionRecord } from './session.types';

// Ownership rules without a database or kernels: hand-written fakes for the two ports the rules touch.
// sessions.int-spec.ts runs the same service over SQLite/PostgreSQL and real kernels.

type RepoPort = Pick<SessionRepository, 'insert' | 'findById' | 'list' | 'touch' | 'end' | 'endAllOfReplica'>;

/** The `sessions` table as a map; `failInsert` makes the next insert fail as a lost database would. */
class FakeSessionRepository implements RepoPort {
  readonly rows = new Map<string, SessionRecord>();
  failInsert?: Error;

  insert(record: SessionRecord): Promise<void> {
    if (this.failInsert) return Promise.reject(this.failInsert);
    this.rows.set(record.id, { ...record });
    return Promise.resolve();
  }
  findById(id: string): Promise<SessionRecord | undefined> {
    const row = this.rows.get(id);
    return Promise.resolve(row && { ...row });
  }
  list(filter: { owner?: string }): Promise<SessionRecord[]> {
    return Promise.resolve(
      [...this.rows.values()].filter((r) => filter.owner === undefined || r.owner === filter.owner),
    );
  }
  touch(id: string, at: number): Promise<void> {
    const row = this.rows.get(id);
    if (row) row.lastUsedAt = at;
    return Promise.resolve();
  }
  end(ids: string[], status: SessionStatus, reason: string, at: number): Promise<void> {
    for (const id of ids) {
      const row = this.rows.get(id);
      if (row?.status === SessionStatus.active) Object.assign(row, { status, endReason: reason, endedAt: at });
    }
    return Promise.resolve();
  }
  async endAllOfReplica(replica: string, status: SessionStatus, reason: string, at: number): Promise<number> {
    const rows = [...this.rows.values()].filter((r) => r.replica === replica && r.status === SessionStatus.active);
    await this.end(
      rows.map((r) => r.id),
      status,
      reason,
      at,
    );
    return rows.length;
  }
}

/** No warm pool; directories are names only, and the fake remembers which were handed out and given back. */
class FakeKernels implements Pick<KernelService, 'takeWarm' | 'allocateDirs' | 'releaseDirs'> {
  readonly allocated: string[] = [];
  readonly released: string[] = [];

  takeWarm(): undefined {
    return undefined;
  }
  allocateDirs(): KernelDirs {
    const base = `/data/sessions/k-${this.allocated.length + 1}`;
    this.allocated.push(base);
    return {
      base,
      workDir: `${base}/work`,
      outputDir: `${base}/outputs`,
      transferDir: `${base}/work/.stoa`,
      inboxDir: `/data/inbox/k-${this.allocated.length}`,
      uid: undefined,
    };
  }
  releaseDirs(dirs: KernelDirs): Promise<void> {
    this.released.push(dirs.base);
    return Promise.resolve();
  }
}

const alice: Principal = { id: 'alice@t', roles: [], scopes: [], source: 'noop' };
const bob: Principal = { id: 'bob@t', roles: [], scopes: [], source: 'noop' };
const settings: SessionSettings = {
  maxSessions: 3,
  idleTimeoutMs: 60_000,
  sweepIntervalMs: 60_000,
  dataDir: '/data',
  replica: 'r1',
};

let repo: FakeSessionRepository;
let kernels: FakeKernels;
let sessions: SessionService;

beforeEach(() => {
  repo = new FakeSessionRepository();
  kernels = new FakeKernels();
  sessions = new SessionService(settings, repo as unknown as SessionRepository, kernels as unknown as KernelService);
});

/** Whatever `get` rejects with, as the caller sees it. */
const failure = (principal: Principal, id: string): Promise<unknown> =>
  sessions.get(principal, id).then(
    () => undefined,
    (err: unknown) => err,
  );

describe('SessionService ownership', () => {
  it('records the creator as owner of an active session on this replica', async () => {
    const rt = await sessions.create(alice, { client: 'test' });
    expect(repo.rows.get(rt.record.id)).toMatchObject({
      owner: 'alice@t',
      status: 'active',
      replica: 'r1',
      metadata: { client: 'test' },
    });
    expect(await sessions.get(alice, rt.record.id)).toBe(rt);
  });

  it("answers another owner's live id exactly like an unknown id, counting only the caller's sessions", async () => {
    const mine = await sessions.create(alice, {});
    await sessions.create(alice, {});
    await sessions.create(bob, {});
    const foreign = await failure(bob, mine.record.id);
    expect(foreign).toBeInstanceOf(SessionNotFoundError);
    expect(foreign).toMatchObject({
      code: 'SESSION_NOT_FOUND',
      message: `Session ${mine.record.id} not found. It may have expired or been cleaned up. Active sessions: 1`,
    });
    const unknown = await failure(bob, 'no-such-session');
    expect(unknown).toMatchObject({
      code: 'SESSION_NOT_FOUND',
      message: 'Session no-such-session not found. It may have expired or been cleaned up. Active sessions: 1',
    });
  });

  it("does not reveal that another owner's session was closed or expired", async () => {
    const closed = await sessions.create(alice, {});
    const expired = await sessions.create(alice, {});
    await sessions.close(alice, closed.record.id);
    await sessions.sweep(Date.now() + settings.idleTimeoutMs + 1);
    expect(await failure(bob, closed.record.id)).toBeInstanceOf(SessionNotFoundError);
    expect(await failure(bob, expired.record.id)).toBeInstanceOf(SessionNotFoundError);
  });

  it('tells the owner their session was closed', async () => {
    const rt = await sessions.create(alice, {});
    expect(await sessions.close(alice, rt.record.id)).toBe(true);
    expect(await failure(alice, rt.record.id)).toBeInstanceOf(SessionClosedError);
    expect(repo.rows.get(rt.record.id)).toMatchObject({ status: 'closed', endReason: 'closed by its owner' });
    expect(kernels.released).toEqual([rt.dirs.base]);
  });

  it('tells the owner their session expired, with the reason', async () => {
    const rt = await sessions.create(alice, {});
    await sessions.sweep(Date.now() + settings.idleTimeoutMs + 1);
    const err = await failure(alice, rt.record.id);
    expect(err).toBeInstanceOf(SessionExpiredError);
    expect((err as Error).message).toContain('has expired (idle timeout)');
  });

  it('refuses an empty id as invalid input', async () => {
    expect(await failure(alice, '')).toBeInstanceOf(InvalidInputError);
  });

  it("does not let a caller close another owner's session", async () => {
    const rt = await sessions.create(alice, {});
    expect(await sessions.close(bob, rt.record.id)).toBe(false);
    expect(await sessions.get(alice, rt.record.id)).toBe(rt);
    expect(repo.rows.get(rt.record.id)?.status).toBe('active');
    expect(kernels.released).toEqual([]);
  });

  it("finds, lists and counts only the caller's live sessions", async () => {
    const a1 = await sessions.create(alice, {});
    const a2 = await sessions.create(alice, {});
    const b1 = await sessions.create(bob, {});
    expect(sessions.find(alice, a1.record.id)).toBe(a1);
    expect(sessions.find(bob, a1.record.id)).toBeUndefined();
    expect(sessions.list(alice)).toEqual([a1, a2]);
    expect(sessions.list(bob)).toEqual([b1]);
    expect([sessions.countLive(alice), sessions.countLive(bob)]).toEqual([2, 1]);
  });

  it('compares owners by principal id only', async () => {
    const rt = await sessions.create(alice, {});
    expect(sessions.find({ ...alice, name: 'Alice', roles: ['admin'], source: 'entra' }, rt.record.id)).toBe(rt);
  });

  it('lets the ownership-free lookups and the admin close see every live session', async () => {
    const rt = await sessions.create(alice, {});
    expect(sessions.peek(rt.record.id)).toBe(rt);
    expect(sessions.isLive(rt.record.id)).toBe(true);
    expect(await sessions.closeAny(rt.record.id, 'closed by an admin')).toBe(true);
    expect(sessions.isLive(rt.record.id)).toBe(false);
    expect(repo.rows.get(rt.record.id)).toMatchObject({ status: 'closed', endReason: 'closed by an admin' });
    expect(await sessions.closeAny(rt.record.id, 'again')).toBe(false);
  });
});

describe('SessionService limits and expiry', () => {
  it('counts every owner toward the session cap', async () => {
    await sessions.create(alice, {});
    await sessions.create(alice, {});
    await sessions.create(bob, {});
    await expect(sessions.create(bob, {})).rejects.toBeInstanceOf(SessionLimitError);
    expect(sessions.countLive(bob)).toBe(1);
  });

  it('keeps the cap exact when creations race', async () => {
    const results = await Promise.allSettled([1, 2, 3, 4, 5].map(() => sessions.create(alice, {})));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
    expect(results.filter((r) => r.status === 'rejected').map((r) => r.reason as unknown)).toEqual([
      expect.any(SessionLimitError),
      expect.any(SessionLimitError),
    ]);
  });

  it('gives back the reserved slot and directories when the record cannot be stored', async () => {
    repo.failInsert = new Error('database is gone');
    await expect(sessions.create(alice, {}, 'sid-1')).rejects.toThrow('database is gone');
    expect(sessions.isLive('sid-1')).toBe(false);
    expect(kernels.released).toEqual(kernels.allocated);
  });

  it('expires only idle sessions that are not running anything', async () => {
    const idle = await sessions.create(alice, {});
    const busy = await sessions.create(alice, {});
    let release!: () => void;
    const running = busy.lock.runExclusive(() => new Promise<void>((r) => (release = r)));
    expect(await sessions.sweep(Date.now() + settings.idleTimeoutMs + 1)).toBe(1);
    expect(sessions.list(alice)).toEqual([busy]);
    expect(repo.rows.get(idle.record.id)).toMatchObject({ status: 'expired', endReason: 'idle timeout' });
    release();
    await running;
  });

  it('keeps a session used within the idle timeout', async () => {
    const rt = await sessions.create(alice, {});
    expect(await sessions.sweep(rt.record.lastUsedAt + settings.idleTimeoutMs)).toBe(0);
    expect(sessions.find(alice, rt.record.id)).toBe(rt);
  });

  it('never expires sessions when the idle timeout is 0', async () => {
    const never = new SessionService(
      { ...settings, idleTimeoutMs: 0 },
      repo as unknown as SessionRepository,
      kernels as unknown as KernelService,
    );
    const rt = await never.create(alice, {});
    expect(await never.sweep(Number.MAX_SAFE_INTEGER)).toBe(0);
    expect(never.find(alice, rt.record.id)).toBe(rt);
  });
});
