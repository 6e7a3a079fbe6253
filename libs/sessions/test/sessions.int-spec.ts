import { existsSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Test, type TestingModule } from '@nestjs/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '@stoa/core';
import { ExecutionModule, ExecutionService } from '@stoa/execution';
import { KernelModule } from '@stoa/kernel';
import { PersistenceModule } from '@stoa/persistence';
import { SESSION_MIGRATIONS, SessionModule, SessionService, SessionStatus } from '@stoa/sessions';
import { dbTarget, postgresAvailable, type DbTarget } from '../../../test/support/databases';
import { testKernelSettings } from '../../../test/support/kernel-sandbox';

const alice: Principal = { id: 'alice@t', roles: [], scopes: [], source: 'noop' };
const bob: Principal = { id: 'bob@t', roles: [], scopes: [], source: 'noop' };

async function boot(db: DbTarget, dataDir: string, replica = 'r1'): Promise<TestingModule> {
  const mod = await Test.createTestingModule({
    imports: [
      PersistenceModule.forRoot({
        database: db.database,
        defaultSqlitePath: db.defaultSqlitePath,
        migrations: [...SESSION_MIGRATIONS],
      }),
      KernelModule.forRoot(testKernelSettings()),
      SessionModule.forRoot({ maxSessions: 3, idleTimeoutMs: 60_000, sweepIntervalMs: 60_000, dataDir, replica }),
      ExecutionModule.forRoot({
        serverName: 't',
        mode: 'sync',
        promotionThresholdS: 60,
        defaultTimeoutS: 30,
        maxTimeoutS: 60,
        truncationThreshold: 50_000,
        interruptGraceMs: 1000,
      }),
    ],
  }).compile();
  await mod.init();
  return mod;
}

const pg = postgresAvailable();
const targets = (['sqlite', 'postgres'] as const).filter((t) => t === 'sqlite' || pg);

describe.each(targets)('sessions on %s', (kind) => {
  const db = dbTarget(kind);
  const dataDir = mkdtempSync(join(tmpdir(), 'stoa-sessions-'));
  let mod: TestingModule;
  let sessions: SessionService;
  let execution: ExecutionService;

  beforeAll(async () => {
    mod = await boot(db, dataDir);
    sessions = mod.get(SessionService);
    execution = mod.get(ExecutionService);
  });
  afterAll(async () => {
    await mod?.close();
    await db.cleanup();
  });

  it('persists a session record owned by its creator and runs code in it', async () => {
    const r = await execution.execute(alice, { code: 'a = 2\na * 21' });
    expect(r).toMatchObject({ success: true, stdout: '42\n' });
    const [record] = await sessions.listRecords({ owner: alice.id });
    expect(record).toMatchObject({ id: r.session_id, owner: 'alice@t', status: 'active', replica: 'r1' });
  });

  it("answers another owner's id exactly like an unknown id", async () => {
    const mine = await execution.execute(alice, { code: 'pass' });
    const foreign = await sessions.get(bob, mine.session_id as string).catch((e: Error) => e.message);
    const unknown = await sessions.get(bob, 's-unknown').catch((e: Error) => e.message);
    expect(foreign).toBe(
      `Session ${mine.session_id as string} not found. It may have expired or been cleaned up. Active sessions: 0`,
    );
    expect(unknown).toBe('Session s-unknown not found. It may have expired or been cleaned up. Active sessions: 0');
  });

  it('closing stops the kernel, removes the session directory and records the end', async () => {
    const r = await execution.execute(alice, { code: 'import os; os.getpid()' });
    const id = r.session_id as string;
    const rt = sessions.find(alice, id);
    expect(rt && existsSync(rt.workDir)).toBe(true);
    expect(await sessions.close(alice, id)).toBe(true);
    expect(rt?.kernel?.alive).toBe(false);
    expect(existsSync(join(dataDir, 'sessions', id))).toBe(false);
    const [record] = (await sessions.listRecords({ owner: alice.id })).filter((s) => s.id === id);
    expect(record).toMatchObject({ status: SessionStatus.closed, endReason: 'closed by its owner' });
  });

  it('the idle sweep expires sessions and an expired id says so to its owner', async () => {
    const r = await execution.execute(bob, { code: 'pass' });
    const expired = await sessions.sweep(Date.now() + 120_000);
    expect(expired).toBeGreaterThanOrEqual(1);
    const msg = await sessions.get(bob, r.session_id as string).catch((e: Error) => e.message);
    expect(msg).toContain('has expired (idle timeout)');
  });

  it('enforces the session cap exactly under concurrent creation', async () => {
    for (const rt of [...sessions.list(alice), ...sessions.list(bob)])
      await sessions.close({ ...alice, id: rt.record.owner }, rt.record.id);
    const results = await Promise.allSettled(Array.from({ length: 5 }, () => sessions.create(alice, {})));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
    expect(results.filter((r) => r.status === 'rejected').map((r) => (r.reason as Error).message)).toEqual([
      'Maximum number of sessions (3) reached. Please close an existing session before creating a new one.',
      'Maximum number of sessions (3) reached. Please close an existing session before creating a new one.',
    ]);
  });

  it('after a restart of the same replica, old ids answer "expired" to their owner', async () => {
    const live = sessions.list(alice)[0];
    expect(live).toBeDefined();
    await mod.close();
    mod = await boot(db, dataDir);
    sessions = mod.get(SessionService);
    const msg = await sessions.get(alice, live?.record.id as string).catch((e: Error) => e.message);
    expect(msg).toContain('has expired (the executor shut down)');
  });
});
