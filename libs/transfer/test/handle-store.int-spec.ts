import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { kernelDirs, prepareDirs, stashDir, type KernelDirs } from '@stoa/kernel';
import { HandleStore } from '@stoa/transfer';

/** Real files in a real kernel directory layout (no kernel process needed to exercise the store). */
function setup(over: Partial<ConstructorParameters<typeof HandleStore>[0]> = {}) {
  const data = mkdtempSync(join(tmpdir(), 'stoa-handles-'));
  const dirs = kernelDirs(join(data, 'sessions', 'k-test'), undefined);
  prepareDirs(dirs);
  mkdirSync(stashDir(dirs), { recursive: true });
  const store = new HandleStore({
    dir: join(data, 'handles'),
    ttlMs: 60_000,
    maxBytes: 1000,
    maxBytesPerOwner: 10_000,
    maxCountPerOwner: 3,
    ...over,
  });
  return { dirs, store };
}

function stash(dirs: KernelDirs, id: string, bytes = 10): void {
  writeFileSync(join(stashDir(dirs), `${id}.pkl`), Buffer.alloc(bytes, 1));
  writeFileSync(join(stashDir(dirs), `${id}.json`), JSON.stringify({ serializer: 'cloudpickle', type: 'dict' }));
}

describe('HandleStore', () => {
  it('ingests what a kernel stashed, per owner; another owner sees nothing', async () => {
    const { dirs, store } = setup();
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
    const { dirs, store } = setup();
    stash(dirs, 'h_aaaaaaaaaaaa', 5000); // over maxBytes
    symlinkSync('/etc/hostname', join(stashDir(dirs), 'h_bbbbbbbbbbbb.pkl'));
    writeFileSync(join(stashDir(dirs), 'h_bbbbbbbbbbbb.json'), '{}');
    await store.ingest('alice@t', dirs, ['h_aaaaaaaaaaaa', 'h_bbbbbbbbbbbb', '../../etc/passwd']);
    expect(await store.lookup('alice@t', 'h_aaaaaaaaaaaa')).toBeUndefined();
    expect(await store.lookup('alice@t', 'h_bbbbbbbbbbbb')).toBeUndefined();
  });

  it('evicts the oldest beyond the per-owner count and expires after the TTL', async () => {
    const { dirs, store } = setup();
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
});
