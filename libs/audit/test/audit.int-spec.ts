import { createHash } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { getRepositoryToken } from '@nestjs/typeorm';
import { DataSource, type Repository } from 'typeorm';
import { afterAll, afterEach, beforeAll, describe, expect, it, type MockInstance, vi } from 'vitest';
import {
  AUDIT_MIGRATIONS,
  AuditModule,
  AuditOutcome,
  AuditService,
  auditConfigSchema,
  type AuditConfig,
  type AuditEvent,
  type AuditRecord,
} from '@stoa/audit';
import { AuditEntity } from '../src/audit.entity';
import { InvalidInputError } from '@stoa/core';
import { PersistenceModule } from '@stoa/persistence';
import { dbTarget, postgresAvailable, type DbTarget } from '../../../test/support/databases';

const pg = postgresAvailable();
const targets = (['sqlite', 'postgres'] as const).filter((t) => t === 'sqlite' || pg);

const DAY = 86_400_000;
/** Records made by the tests carry clock values far in the future, so retention never touches them. */
const FUTURE = Date.UTC(2090, 0, 1);

async function boot(db: DbTarget, config: AuditConfig): Promise<TestingModule> {
  const mod = await Test.createTestingModule({
    imports: [
      PersistenceModule.forRoot({
        database: db.database,
        defaultSqlitePath: db.defaultSqlitePath,
        migrations: [...AUDIT_MIGRATIONS],
      }),
      AuditModule.forRoot(config),
    ],
  }).compile();
  await mod.init();
  return mod;
}

function event(over: Partial<AuditEvent> = {}): AuditEvent {
  return {
    principal: 'alice@t',
    tool: 'github.search',
    upstream: 'github',
    outcome: AuditOutcome.ok,
    decision: 'allowed',
    durationMs: 12,
    bytesIn: 10,
    bytesOut: 20,
    ...over,
  };
}

/** record() with the clock read as `at` (the service stamps rows with Date.now()). */
function recordAt(audit: AuditService, at: number, e: AuditEvent): void {
  const clock = vi.spyOn(Date, 'now').mockReturnValue(at);
  try {
    audit.record(e);
  } finally {
    clock.mockRestore();
  }
}

function sha256(s: string): string {
  return createHash('sha256').update(s).digest('hex');
}

describe.each(targets)('audit log on %s', (kind) => {
  const db = dbTarget(kind);
  let mod: TestingModule;
  let audit: AuditService;
  let repo: Repository<AuditEntity>;
  let logged: MockInstance<Logger['error']> | undefined;

  beforeAll(async () => {
    mod = await boot(db, auditConfigSchema.parse({}));
    audit = mod.get(AuditService);
    repo = mod.get<Repository<AuditEntity>>(getRepositoryToken(AuditEntity));
  });
  afterEach(() => {
    logged?.mockRestore();
  });
  afterAll(async () => {
    await mod?.close();
    await db.cleanup();
  });

  /** Captures (and silences) what the service logs as errors. */
  function captureErrors(): void {
    logged = vi.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
  }

  it('records calls and lists them newest first with every field; code is kept only as its sha256 by default', async () => {
    const t = FUTURE;
    const code = 'import os\nprint(os.getcwd())\n';
    recordAt(
      audit,
      t,
      event({
        principal: 'fields@t',
        tool: 'execute',
        upstream: 'executor',
        sessionId: 's-fields',
        code,
        durationMs: 41.6,
        bytesIn: 123,
        bytesOut: 4567,
      }),
    );
    recordAt(
      audit,
      t + 1,
      event({ principal: 'fields@t', outcome: AuditOutcome.denied, decision: 'rule deny-github' }),
    );
    recordAt(
      audit,
      t + 2,
      event({
        principal: 'fields@t',
        tool: 'jira.get',
        upstream: 'jira',
        outcome: AuditOutcome.upstreamError,
        sessionId: null,
      }),
    );
    await audit.flush();

    const { records, next_cursor } = await audit.list({ principal: 'fields@t', limit: 10 });
    expect(next_cursor).toBeNull();
    expect(records.map((r) => r.at)).toEqual([
      new Date(t + 2).toISOString(),
      new Date(t + 1).toISOString(),
      new Date(t).toISOString(),
    ]);
    expect(records.map((r) => r.tool)).toEqual(['jira.get', 'github.search', 'execute']);
    expect(new Set(records.map((r) => r.id)).size).toBe(3);
    for (const r of records) expect(r.id).toMatch(/^a-[0-9a-z]+-[\w-]+$/);
    expect(records[2]).toEqual<AuditRecord>({
      id: expect.any(String) as string,
      at: '2090-01-01T00:00:00.000Z',
      principal: 'fields@t',
      tool: 'execute',
      upstream: 'executor',
      session_id: 's-fields',
      outcome: 'ok',
      decision: 'allowed',
      duration_ms: 42,
      bytes_in: 123,
      bytes_out: 4567,
      code_sha256: sha256(code),
      code: null,
    });
    expect(records[1]).toMatchObject({
      outcome: 'denied',
      decision: 'rule deny-github',
      session_id: null,
      code_sha256: null,
      code: null,
    });
    expect(records[0]).toMatchObject({
      upstream: 'jira',
      outcome: 'upstream_error',
      session_id: null,
      code_sha256: null,
      code: null,
    });
    // numbers come back as numbers on both databases (bigint `at` included)
    const [row] = await repo.find({ where: { id: records[2]?.id } });
    expect(row).toMatchObject({ at: t, durationMs: 42, bytesIn: 123, bytesOut: 4567 });
  });

  it('keeps the code itself with store_code: true', async () => {
    const other = await boot(db, auditConfigSchema.parse({ store_code: true }));
    try {
      const withCode = other.get(AuditService);
      const code = 'x = 1\nx + 1';
      recordAt(withCode, FUTURE + 10, event({ principal: 'store-code@t', tool: 'execute', code }));
      recordAt(withCode, FUTURE + 11, event({ principal: 'store-code@t', tool: 'list_tools' }));
      await withCode.flush();
      const { records } = await audit.list({ principal: 'store-code@t', limit: 5 });
      expect(records.map((r) => [r.tool, r.code, r.code_sha256])).toEqual([
        ['list_tools', null, null],
        ['execute', code, sha256(code)],
      ]);
    } finally {
      await other.close();
    }
  });

  it('filters by principal, tool, outcome, session and time (since inclusive, until exclusive)', async () => {
    const t = FUTURE + 1000;
    const rows: [number, Partial<AuditEvent>][] = [
      [t, { principal: 'filter-a@t', tool: 'filter.search', outcome: AuditOutcome.ok, sessionId: 's-filter-1' }],
      [
        t + 1,
        { principal: 'filter-b@t', tool: 'filter.search', outcome: AuditOutcome.denied, sessionId: 's-filter-1' },
      ],
      [
        t + 2,
        { principal: 'filter-a@t', tool: 'filter.get', outcome: AuditOutcome.toolError, sessionId: 's-filter-2' },
      ],
      [t + 3, { principal: 'filter-a@t', tool: 'filter.search', outcome: AuditOutcome.denied, sessionId: null }],
      [
        t + 4,
        { principal: 'filter-b@t', tool: 'filter.get', outcome: AuditOutcome.rateLimited, sessionId: 's-filter-2' },
      ],
    ];
    for (const [at, over] of rows) recordAt(audit, at, event(over));
    await audit.flush();
    const offsets = async (f: Omit<Parameters<AuditService['list']>[0], 'limit'>) =>
      (await audit.list({ ...f, limit: 100 })).records.map((r) => Date.parse(r.at) - t);

    expect(await offsets({ principal: 'filter-a@t' })).toEqual([3, 2, 0]);
    expect(await offsets({ principal: 'filter-b@t' })).toEqual([4, 1]);
    expect(await offsets({ tool: 'filter.get' })).toEqual([4, 2]);
    expect(await offsets({ session_id: 's-filter-1' })).toEqual([1, 0]);
    expect(await offsets({ session_id: 's-filter-2' })).toEqual([4, 2]);
    expect(await offsets({ outcome: 'denied', since: t, until: t + 5 })).toEqual([3, 1]);
    expect(await offsets({ since: t + 1, until: t + 4 })).toEqual([3, 2, 1]);
    expect(await offsets({ since: t + 4 })).toEqual([4]);
    expect(await offsets({ principal: 'filter-a@t', until: t + 2 })).toEqual([0]);
    expect(await offsets({ principal: 'filter-a@t', tool: 'filter.search', outcome: 'denied' })).toEqual([3]);
    expect(await offsets({ principal: 'filter-a@t', tool: 'filter.get', session_id: 's-filter-1' })).toEqual([]);
    expect(await offsets({ principal: 'nobody@t' })).toEqual([]);
    // fractional bounds (e.g. from a parsed date) work on both databases: since t+0.5 excludes t, until t+2.5 includes t+2
    expect(await offsets({ since: t + 0.5, until: t + 2.5 })).toEqual([2, 1]);
    for (const bad of [{ since: Number.NaN }, { until: Number.POSITIVE_INFINITY }, { since: 1e20 }]) {
      const err = await audit.list({ ...bad, limit: 10 }).catch((e: unknown) => e);
      expect(err, JSON.stringify(bad)).toBeInstanceOf(InvalidInputError);
      expect((err as Error).message).toMatch(/^(since|until) must be a time in epoch milliseconds\.$/);
    }

    // outcome alone: only matching records, these among them
    const denied = (await audit.list({ outcome: 'denied', limit: 1000 })).records;
    expect(denied.every((r) => r.outcome === 'denied')).toBe(true);
    expect(denied.filter((r) => r.principal.startsWith('filter-')).map((r) => Date.parse(r.at) - t)).toEqual([3, 1]);
  });

  it('pages through 25 records 10 at a time (10/10/5) without duplicates or gaps, even within one millisecond', async () => {
    const t = FUTURE + 2000;
    // 12 records in one millisecond, 12 in the next, 1 after: both page boundaries fall inside a millisecond
    for (let i = 0; i < 25; i++) recordAt(audit, t + Math.floor(i / 12), event({ principal: 'pager@t', bytesIn: i }));
    await audit.flush();

    const pages: AuditRecord[][] = [];
    let cursor: string | undefined;
    do {
      const page = await audit.list({ principal: 'pager@t', limit: 10, cursor });
      pages.push(page.records);
      cursor = page.next_cursor ?? undefined;
      if (cursor) expect(cursor).toMatch(/^[\w-]+$/);
    } while (cursor && pages.length < 10);

    expect(pages.map((p) => p.length)).toEqual([10, 10, 5]);
    const all = pages.flat();
    expect(new Set(all.map((r) => r.id)).size).toBe(25);
    expect(all.map((r) => r.bytes_in).sort((a, b) => a - b)).toEqual(Array.from({ length: 25 }, (_, i) => i));
    const ats = all.map((r) => Date.parse(r.at));
    expect(ats).toEqual([...ats].sort((a, b) => b - a));
    // the same order as one big page
    expect(all.map((r) => r.id)).toEqual(
      (await audit.list({ principal: 'pager@t', limit: 1000 })).records.map((r) => r.id),
    );
    // an exactly full last page has no cursor
    const five = await audit.list({
      principal: 'pager@t',
      limit: 5,
      cursor: Buffer.from(`${ats[19]}|${all[19]?.id}`).toString('base64url'),
    });
    expect(five.records.map((r) => r.id)).toEqual(all.slice(20).map((r) => r.id));
    expect(five.next_cursor).toBeNull();
  });

  it('refuses a cursor it did not issue, with a message saying what to do', async () => {
    // tampered cursors with a time PostgreSQL would refuse (fraction, beyond bigint) are refused the same way on both databases
    const forged = [
      'soon|a-1',
      '1700000000000',
      '|a-1',
      '1.5|a-1',
      '1e20|a-1',
      '99999999999999999999|a-1',
      ' |a-1',
      '0x10|a-1',
    ];
    for (const cursor of ['not-a-cursor', ...forged.map((c) => Buffer.from(c).toString('base64url'))]) {
      const err = await audit.list({ limit: 10, cursor }).catch((e: unknown) => e);
      expect(err, cursor).toBeInstanceOf(InvalidInputError);
      expect((err as Error).message).toBe('cursor is not one this server issued; start again without it.');
    }
  });

  it('accepts limits 1..1000 and refuses 0 and 1001', async () => {
    for (const limit of [0, 1001, -1, 1.5, Number.NaN]) {
      const err = await audit.list({ limit }).catch((e: unknown) => e);
      expect(err, String(limit)).toBeInstanceOf(InvalidInputError);
      expect((err as Error).message).toBe('limit must be between 1 and 1000.');
    }
    expect((await audit.list({ principal: 'pager@t', limit: 1 })).records).toHaveLength(1);
    expect((await audit.list({ principal: 'pager@t', limit: 1000 })).records).toHaveLength(25);
  });

  it('purges only records older than retention_days', async () => {
    const now = Date.now();
    const cutoff = now - 30 * DAY;
    const old = (id: string, at: number): AuditEntity =>
      Object.assign(new AuditEntity(), {
        id,
        at,
        principal: 'retention@t',
        tool: 'old.tool',
        upstream: 'u',
        sessionId: null,
        outcome: 'ok',
        decision: 'allowed',
        durationMs: 1,
        bytesIn: 0,
        bytesOut: 0,
        codeSha256: null,
        code: null,
      });
    await repo.insert([
      old('a-old-400d', now - 400 * DAY),
      old('a-old-31d', now - 31 * DAY),
      old('a-old-cutoff-1ms', cutoff - 1),
      old('a-at-cutoff', cutoff),
      old('a-old-29d', now - 29 * DAY),
    ]);
    recordAt(audit, now, event({ principal: 'retention@t', tool: 'new.tool' }));
    await audit.flush();

    expect(await audit.purge(now)).toBe(3);
    const left = (await audit.list({ principal: 'retention@t', limit: 100 })).records.map((r) => r.id);
    expect(left).toHaveLength(3);
    expect(left.slice(1)).toEqual(['a-old-29d', 'a-at-cutoff']);
    expect(await audit.purge(now)).toBe(0);
    // everything else (the clock values of the other tests are in the future) is untouched
    expect((await audit.list({ principal: 'pager@t', limit: 1000 })).records).toHaveLength(25);
  });

  it('keeps a record whose values are longer than their columns, clipped', async () => {
    const principal = `long-${'x'.repeat(400)}`;
    audit.record(event({ principal, tool: `t-${'y'.repeat(300)}`, sessionId: `s-${'z'.repeat(300)}` }));
    await audit.flush();
    const [row] = (await audit.list({ principal: principal.slice(0, 300), limit: 10 })).records;
    expect(row?.principal).toHaveLength(300);
    expect(row?.tool).toHaveLength(200);
    expect(row?.session_id).toHaveLength(200);
  });

  it('a write after the database went away is logged, never thrown (and list/purge do not hang)', async () => {
    const other = await boot(db, auditConfigSchema.parse({}));
    const doomed = other.get(AuditService);
    await other.get(DataSource).destroy();
    captureErrors();
    expect(() => doomed.record(event({ principal: 'gone@t', tool: 'gone.tool' }))).not.toThrow();
    await expect(doomed.flush()).resolves.toBeUndefined();
    expect(logged).toHaveBeenCalledWith(expect.objectContaining({ tool: 'gone.tool' }), 'audit write failed');
    expect(await doomed.purge()).toBe(0);
    await expect(doomed.list({ limit: 1 })).rejects.toThrow();
    await other.close();
    expect((await audit.list({ principal: 'gone@t', limit: 10 })).records).toEqual([]);
  });

  it('writes still in flight at shutdown are finished before the module closes', async () => {
    const other = await boot(db, auditConfigSchema.parse({}));
    const closing = other.get(AuditService);
    for (let i = 0; i < 5; i++) closing.record(event({ principal: 'shutdown@t', bytesIn: i }));
    await other.close();
    expect((await audit.list({ principal: 'shutdown@t', limit: 10 })).records).toHaveLength(5);
  });
});
