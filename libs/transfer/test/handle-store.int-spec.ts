import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { afterAll, describe, expect, it } from 'vitest';
import { kernelDirs, prepareDirs, stashDir, type KernelDirs } from '@stoa/kernel';
import { buildDataSourceOptions, ensurePostgresSchema } from '@stoa/persistence';
import { DatabaseHandles, HandleStore, TRANSFER_MIGRATIONS } from '@stoa/transfer';
import { HandleChunkEntity, HandleEntity } from '../src/inputs/handle.entities';
import { dbTarget, postgresAvailable, type DbTarget } from '../../../test/support/databases';

const pg = postgresAvailable();
/** The store on this replica's disk, and shared through a database (SQLite here, PostgreSQL in pools). */
const backends = ['local', 'sqlite', 'postgres'].filter((b) => b !== 'postgres' || pg) as (
  'local' | 'sqlite' | 'postgres'
)[];

function stash(dirs: KernelDirs, id: string, bytes = 10): void {
  writeFileSync(join(stashDir(dirs), `${id}.pkl`), Buffer.alloc(bytes, 1));
  writeFileSync(join(stashDir(dirs), `${id}.json`), JSON.stringify({ serializer: 'cloudpickle', type: 'dict' }));
}

describe.each(backends)('HandleStore (%s)', (backend) => {
  const opened: { db: DataSource; target: DbTarget }[] = [];
  afterAll(async () => {
    for (const { db, target } of opened) {
      await db.destroy();
      await target.cleanup();
    }
  });

  /** A database both "replicas" of a test share. */
  async function database(): Promise<DataSource> {
    const target = dbTarget(backend as 'sqlite' | 'postgres');
    const { url, schema } = target.database;
    if (url && schema) await ensurePostgresSchema(url, schema);
    const db = new DataSource(
      buildDataSourceOptions({
        database: target.database,
        defaultSqlitePath: target.defaultSqlitePath,
        migrations: [...TRANSFER_MIGRATIONS],
        entities: [HandleEntity, HandleChunkEntity],
      }),
    );
    await db.initialize();
    opened.push({ db, target });
    return db;
  }

  /** Real files in a real kernel directory layout (no kernel process needed to exercise the store). */
  async function setup(over: Partial<ConstructorParameters<typeof HandleStore>[0]> = {}, shared?: DataSource) {
    const data = mkdtempSync(join(tmpdir(), 'stoa-handles-'));
    const dirs = kernelDirs(join(data, 'sessions', 'k-test'), undefined);
    prepareDirs(dirs);
    mkdirSync(stashDir(dirs), { recursive: true });
    const settings = {
      dir: join(data, 'handles'),
      ttlMs: 60_000,
      maxBytes: 1000,
      maxBytesPerOwner: 10_000,
      maxCountPerOwner: 3,
      ...over,
    };
    const db = backend === 'local' ? undefined : (shared ?? (await database()));
    const store = new HandleStore(
      settings,
      db ? new DatabaseHandles(db, join(settings.dir, 'cache'), settings.ttlMs) : undefined,
    );
    return { dirs, store, db };
  }

  it('ingests what a kernel stashed, per owner; another owner sees nothing', async () => {
    const { dirs, store } = await setup();
    stash(dirs, 'h_0123456789ab');
    await store.ingest('alice@t', dirs, ['h_0123456789ab']);
    expect(await store.lookup('alice@t', 'h_0123456789ab')).toMatchObject({
      serializer: 'cloudpickle',
      size: 10,
      type: 'dict',
    });
    expect(await store.lookup('bob@t', 'h_0123456789ab')).toBeUndefined();
    expect(await store.lookup('alice@t', 'h_ffffffffffff')).toBeUndefined();
    const copy = await store.provide((await store.lookup('alice@t', 'h_0123456789ab'))!, 'h_0123456789ab', dirs);
    expect(copy.startsWith(dirs.inboxDir)).toBe(true);
  });

  it('refuses oversized objects, planted symlinks and malformed ids', async () => {
    const { dirs, store } = await setup();
    stash(dirs, 'h_aaaaaaaaaaaa', 5000); // over maxBytes
    symlinkSync('/etc/hostname', join(stashDir(dirs), 'h_bbbbbbbbbbbb.pkl'));
    writeFileSync(join(stashDir(dirs), 'h_bbbbbbbbbbbb.json'), '{}');
    await store.ingest('alice@t', dirs, ['h_aaaaaaaaaaaa', 'h_bbbbbbbbbbbb', '../../etc/passwd']);
    expect(await store.lookup('alice@t', 'h_aaaaaaaaaaaa')).toBeUndefined();
    expect(await store.lookup('alice@t', 'h_bbbbbbbbbbbb')).toBeUndefined();
  });

  it('evicts the oldest beyond the per-owner count and expires after the TTL', async () => {
    const { dirs, store } = await setup();
    const ids = ['h_000000000001', 'h_000000000002', 'h_000000000003', 'h_000000000004'];
    for (const id of ids) {
      stash(dirs, id);
      await store.ingest('alice@t', dirs, [id]);
    }
    const kept = await Promise.all(ids.map(async (id) => (await store.lookup('alice@t', id)) !== undefined));
    expect(kept.filter(Boolean).length).toBe(3);
    expect(kept[3]).toBe(true); // the newest stays
    expect(await store.sweep(Date.now() + 120_000)).toBe(3);
    expect(await store.lookup('alice@t', 'h_000000000004')).toBeUndefined();
  });

  // One replica's disk has nothing to share; the database backends do.
  if (backend !== 'local')
    it('shares handles between replicas of one database (payloads of several chunks), never between owners', async () => {
      const a = await setup({ maxBytes: 5 * 1024 * 1024, maxBytesPerOwner: 10 * 1024 * 1024 });
      const b = await setup({ maxBytes: 5 * 1024 * 1024, maxBytesPerOwner: 10 * 1024 * 1024 }, a.db);
      const payload = Buffer.alloc(2.5 * 1024 * 1024 + 7, 0);
      for (let i = 0; i < payload.length; i++) payload[i] = i % 251;
      writeFileSync(join(stashDir(a.dirs), 'h_abcdefabcdef.pkl'), payload);
      writeFileSync(
        join(stashDir(a.dirs), 'h_abcdefabcdef.json'),
        JSON.stringify({ serializer: 'pickle', type: 'bytes' }),
      );
      await a.store.ingest('alice@t', a.dirs, ['h_abcdefabcdef']);
      const there = await b.store.lookup('alice@t', 'h_abcdefabcdef');
      expect(there).toMatchObject({ size: payload.length, type: 'bytes' });
      const copy = await b.store.provide(there!, 'h_abcdefabcdef', b.dirs);
      expect(readFileSync(copy).equals(payload)).toBe(true);
      // Another owner, on either replica, sees exactly what an unknown id gives.
      expect(await b.store.lookup('bob@t', 'h_abcdefabcdef')).toBeUndefined();
      expect(await a.store.lookup('bob@t', 'h_abcdefabcdef')).toBeUndefined();
      // bob planting the same id in his own kernel makes a handle of his own and leaves alice's alone.
      stash(b.dirs, 'h_abcdefabcdef', 3);
      await b.store.ingest('bob@t', b.dirs, ['h_abcdefabcdef']);
      expect((await a.store.lookup('bob@t', 'h_abcdefabcdef'))?.size).toBe(3);
      expect((await a.store.lookup('alice@t', 'h_abcdefabcdef'))?.size).toBe(payload.length);
      // Expiry reaches every replica: swept on one, gone on the other (its cached copy too).
      expect(await a.store.sweep(Date.now() + 120_000)).toBe(2);
      expect(await b.store.lookup('alice@t', 'h_abcdefabcdef')).toBeUndefined();
    });
});
