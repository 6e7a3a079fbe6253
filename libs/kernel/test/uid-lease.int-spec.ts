import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { lockDataDir, UidLeases } from '@stoa/kernel';

const isRoot = process.geteuid?.() === 0;
/** A pid that existed and is gone now. */
const deadPid = () => spawnSync('true').pid;

describe('host-wide uid leases', () => {
  const dir = mkdtempSync(join(tmpdir(), 'stoa-leases-'));
  const base = 290_000 + (process.pid % 1000) * 10;
  const leases = (dataDir = 'a') => new UidLeases({ base, count: 4, dir, dataDir });
  const sleepers: ReturnType<typeof spawn>[] = [];
  afterAll(() => sleepers.forEach((p) => p.kill('SIGKILL')));

  it("never hands out a uid another live server holds, and takes over a dead server's lease", () => {
    const first = leases();
    const taken = [first.acquire(), first.acquire()];
    const second = leases();
    const mine = [second.acquire(), second.acquire()];
    expect(mine.filter((u) => taken.includes(u))).toEqual([]);
    expect(() => second.acquire()).toThrow(/All 4 kernel uids .* are leased or still run processes on this host/);
    // A lease whose server died is free again once nothing runs as its uid.
    writeFileSync(join(dir, String(taken[0])), `${deadPid()}\n`);
    expect(second.acquire()).toBe(taken[0]);
    for (const l of [first, second]) l.releaseAll();
  });

  it.runIf(isRoot)(
    'skips a uid that still runs a process (a zombie counts too) and kills leftovers on release',
    async () => {
      const l = leases('b');
      const uid = l.acquire();
      l.release(uid);
      const sleeper = spawn('sleep', ['30'], { uid, gid: uid, stdio: 'ignore' });
      sleepers.push(sleeper);
      await new Promise((r) => sleeper.once('spawn', r));
      const again = new UidLeases({ base: uid, count: 1, dir, dataDir: 'b' });
      expect(() => again.acquire()).toThrow(/still run processes/);
      sleeper.kill('SIGKILL');
      await new Promise((r) => sleeper.once('exit', r));
      const next = again.acquire();
      expect(next).toBe(uid);
      const leftover = spawn('sleep', ['30'], { uid, gid: uid, stdio: 'ignore' });
      sleepers.push(leftover);
      const exited = new Promise((r) => leftover.once('exit', (_c, sig) => r(sig)));
      await new Promise((r) => leftover.once('spawn', r));
      again.release(uid);
      expect(await exited).toBe('SIGKILL');
      expect(existsSync(join(dir, String(uid)))).toBe(false);
    },
  );
});

describe('one server per data dir', () => {
  it("refuses a data dir another live process holds, and takes over a dead one's lock", () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'stoa-lock-'));
    writeFileSync(join(dataDir, '.stoa.lock'), `${process.ppid}\n`);
    expect(() => lockDataDir(dataDir)).toThrow(new RegExp(`in use by another Stoa server \\(pid ${process.ppid}\\)`));
    writeFileSync(join(dataDir, '.stoa.lock'), `${deadPid()}\n`);
    const unlock = lockDataDir(dataDir);
    expect(readFileSync(join(dataDir, '.stoa.lock'), 'utf8').trim()).toBe(String(process.pid));
    unlock();
    expect(existsSync(join(dataDir, '.stoa.lock'))).toBe(false);
  });
});
