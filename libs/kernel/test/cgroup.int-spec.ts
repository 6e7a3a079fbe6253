import { existsSync, mkdtempSync, readFileSync, rmdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Cgroups } from '../src/cgroup';
import { cgroupsWritable } from '../../../test/support/sandbox';

// Real cgroups of this host (root, a writable hierarchy): what a session's group holds, and how it goes away.
const CAPS = { memoryBytes: 64 << 20, pids: 16 };
const leafDirs = (procs: string[]) => procs.map((p) => dirname(p));

describe.runIf(cgroupsWritable())('session cgroups (real cgroups of this host)', () => {
  let groups: Cgroups | undefined;
  afterEach(() => groups?.removeAllSync());

  it('creates a group with the caps written, and removes it', async () => {
    groups = new Cgroups(CAPS, mkdtempSync(join(tmpdir(), 'stoa-cg-')));
    const group = groups.create('k');
    const dirs = leafDirs(group.procs);
    expect(dirs.length).toBeGreaterThan(0);
    const limits = dirs.flatMap((d) =>
      ['memory.limit_in_bytes', 'memory.max', 'pids.max']
        .filter((f) => existsSync(join(d, f)))
        .map((f) => `${f}=${readFileSync(join(d, f), 'utf8').trim()}`),
    );
    expect(limits).toContain('pids.max=16');
    expect(limits.some((l) => l === `memory.limit_in_bytes=${64 << 20}` || l === `memory.max=${64 << 20}`)).toBe(true);
    await groups.remove(group);
    expect(dirs.filter((d) => existsSync(d))).toEqual([]);
  });

  it('refuses a start with the reason and what to do when the hierarchy is gone, and leaves nothing behind', async () => {
    groups = new Cgroups(CAPS, mkdtempSync(join(tmpdir(), 'stoa-cg-')));
    const probe = groups.create('probe');
    const roots = [...new Set(leafDirs(probe.procs).map((d) => dirname(d)))];
    await groups.remove(probe);
    for (const root of roots) rmdirSync(root); // the server's parent group, removed under it
    expect(() => groups!.create('k')).toThrow(
      /Cannot create the session's cgroup \(ENOENT.*the kernel was not started\. Check that the cgroup hierarchy is still writable/,
    );
    expect(roots.filter((r) => existsSync(r))).toEqual([]);
  });
});
