import { readdirSync, statSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { KernelService, sandboxConfigSchema } from '@stoa/kernel';
import { testKernelSettings } from '../../../test/support/kernel-sandbox';
import { bubblewrapAvailable, cgroupsWritable } from '../../../test/support/sandbox';

const isRoot = process.geteuid?.() === 0;
/** Pids of the processes that run as `uid` (zombies included), from this test's own look at /proc. */
const runningAs = (uid: number): number[] =>
  readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => statSync(`/proc/${d}`, { throwIfNoEntry: false })?.uid === uid)
    .map(Number);
const opts = { timeoutMs: 10_000, graceMs: 2_000, captureChars: 10_000 };
/** A cell that leaves a process behind in a session of its own (out of the kernel's process group). */
const STRAY = "import subprocess\np = subprocess.Popen(['sleep', '300'], start_new_session=True)\nprint(p.pid)";

describe.runIf(isRoot && bubblewrapAvailable() && cgroupsWritable())('giving a closed kernel uid back', () => {
  const withCgroups = new KernelService(testKernelSettings());
  const withoutCgroups = new KernelService(
    testKernelSettings({
      sandbox: sandboxConfigSchema.parse({ limits: { session_memory_mb: 0, session_processes: 0 } }),
    }),
  );
  afterAll(async () => {
    await withCgroups.onApplicationShutdown();
    await withoutCgroups.onApplicationShutdown();
  });

  it('needs no look at every process of the host once the kernel cgroup is gone, and nothing runs as the uid', async () => {
    const dirs = withCgroups.allocateDirs();
    const kernel = await withCgroups.start(dirs);
    const r = await kernel.execute(STRAY, opts);
    expect(r.stdout.text()).toMatch(/^\d+\n$/);
    expect(runningAs(dirs.uid as number).length).toBeGreaterThanOrEqual(3); // supervisor, user process, the stray
    const scans = withCgroups.uidScans;
    await kernel.close();
    await withCgroups.releaseDirs(dirs);
    expect(withCgroups.uidScans).toBe(scans);
    expect(runningAs(dirs.uid as number)).toEqual([]);
  });

  it('looks at every process when it cannot tell (no cgroup held the kernel), and still leaves nothing behind', async () => {
    const dirs = withoutCgroups.allocateDirs();
    const kernel = await withoutCgroups.start(dirs);
    await kernel.execute(STRAY, opts);
    const scans = withoutCgroups.uidScans;
    await kernel.close();
    await withoutCgroups.releaseDirs(dirs);
    expect(withoutCgroups.uidScans).toBe(scans + 1);
    expect(runningAs(dirs.uid as number)).toEqual([]);
  });
});
