import { mkdirSync, mkdtempSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { kernelDirs, type KernelDirs, prepareDirs } from '@stoa/kernel';
import { changedArtifacts, snapshotOutputs } from './artifacts';

describe('output snapshots (a real directory)', () => {
  let root: string;
  let dirs: KernelDirs;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'stoa-artifacts-'));
    dirs = kernelDirs(join(root, 'sessions', 'k-test'), undefined);
    prepareDirs(dirs);
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('lists an empty directory until its mtime has settled, then reads it again only when the mtime moves', async () => {
    const fresh = await snapshotOutputs(dirs);
    expect(fresh.size).toBe(0);
    expect(fresh.emptySince).toBeUndefined(); // just created: an entry added in the same clock tick could hide
    const settled = new Date(Date.now() - 10_000);
    utimesSync(dirs.outputDir, settled, settled);
    const empty = await snapshotOutputs(dirs, dirs.outputDir, fresh);
    expect(Math.round(empty.emptySince!)).toBe(settled.getTime()); // mtimeMs comes from ns: 761 may read 760.999
    // A file put in with the directory's mtime set back is not seen: the unchanged mtime is what is trusted.
    writeFileSync(join(dirs.outputDir, 'hidden-by-utimes.txt'), 'x');
    utimesSync(dirs.outputDir, settled, settled);
    expect((await snapshotOutputs(dirs, dirs.outputDir, empty)).size).toBe(0);
    // A file written as a cell writes it moves the mtime: listed, and reported as new.
    writeFileSync(join(dirs.outputDir, 'plot.png'), 'png');
    const { artifacts, after } = await changedArtifacts(dirs, empty);
    expect(artifacts.map((a) => a.name)).toEqual(['hidden-by-utimes.txt', 'plot.png']);
    expect(after.emptySince).toBeUndefined();
  });

  it('lists a directory put in place of a settled empty one, even with the same mtime', async () => {
    const settled = new Date(Date.now() - 10_000);
    utimesSync(dirs.outputDir, settled, settled);
    const empty = await snapshotOutputs(dirs);
    expect(empty.emptySince).toBeDefined();
    renameSync(dirs.outputDir, `${dirs.outputDir}.old`);
    mkdirSync(dirs.outputDir);
    writeFileSync(join(dirs.outputDir, 'table.csv'), 'a,b');
    utimesSync(dirs.outputDir, settled, settled);
    const { artifacts } = await changedArtifacts(dirs, empty);
    expect(artifacts.map((a) => a.name)).toEqual(['table.csv']);
  });
});
