import { existsSync, mkdtempSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ExecutionOutcome, KernelService, type PoolStatus } from '@stoa/kernel';
import { descendants } from '../../../test/support/processes';
import { testKernelSettings } from '../../../test/support/kernel-sandbox';

/** Polls the pool until `ok` holds (the pool has no event for this; the deadline makes a stall fail loudly). */
async function poolUntil(
  service: KernelService,
  ok: (s: PoolStatus) => boolean,
  timeoutMs = 20_000,
): Promise<PoolStatus> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const s = service.poolStatus();
    if (ok(s)) return s;
    if (Date.now() > deadline) throw new Error(`pool did not reach the expected state: ${JSON.stringify(s)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('warm kernel pool (real sandboxed kernels)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'stoa-pool-'));
  const service = new KernelService(testKernelSettings({ dataDir, warmPool: 2 }));
  service.onModuleInit();
  afterAll(async () => {
    await service.onApplicationShutdown();
  });

  it('fills up ahead of demand and hands out a ready kernel with its own directories and uid', async () => {
    await poolUntil(service, (s) => s.ready === 2);
    const lease = service.takeWarm();
    expect(lease?.kernel.alive).toBe(true);
    const r = await lease!.kernel.execute(
      'import os\nprint(os.getcwd(), os.environ["AGORA_OUTPUT_DIR"], os.getuid())',
      { timeoutMs: 5000, graceMs: 1000, captureChars: 10_000 },
    );
    expect(r.outcome).toBe(ExecutionOutcome.completed);
    const [cwd, out, uid] = r.stdout.text().trim().split(' ');
    expect([cwd, out]).toEqual([lease!.dirs.workDir, lease!.dirs.outputDir]);
    if (service.sandbox.dropUids) {
      expect(Number(uid)).toBe(lease!.dirs.uid);
      expect(statSync(lease!.dirs.workDir).uid).toBe(lease!.dirs.uid);
    }
    await poolUntil(service, (s) => s.ready === 2);
    await lease!.kernel.close();
    await service.releaseDirs(lease!.dirs);
    expect(existsSync(lease!.dirs.base)).toBe(false);
  });

  it("sets a pooled kernel's session identity before its first command runs, and keeps it for the next ones", async () => {
    await poolUntil(service, (s) => s.ready === 2);
    const lease = service.takeWarm()!;
    const opts = { timeoutMs: 5000, graceMs: 1000, captureChars: 10_000 };
    const show = 'import os\nprint(os.environ.get("USER_IDENTITY"), os.environ.get("STOA_SESSION_ID"))';
    lease.kernel.assign({ USER_IDENTITY: 'alice@example.com', STOA_SESSION_ID: 's-first' });
    expect((await lease.kernel.execute(show, opts)).stdout.text()).toBe('alice@example.com s-first\n');
    expect((await lease.kernel.execute(show, opts)).stdout.text()).toBe('alice@example.com s-first\n');
    // Another pooled kernel knows nothing of it until it is given its own.
    const other = service.takeWarm()!;
    expect((await other.kernel.execute(show, opts)).stdout.text()).toBe('None None\n');
    for (const l of [lease, other]) {
      await l.kernel.close();
      await service.releaseDirs(l.dirs);
    }
  });

  it('gives every kernel a different uid when the server is root', async () => {
    await poolUntil(service, (s) => s.ready === 2);
    const a = service.takeWarm()!;
    const b = service.takeWarm()!;
    if (service.sandbox.dropUids) expect(a.dirs.uid).not.toBe(b.dirs.uid);
    expect(a.dirs.base).not.toBe(b.dirs.base);
    for (const l of [a, b]) {
      await l.kernel.close();
      await service.releaseDirs(l.dirs);
    }
  });

  it('replaces a pooled kernel that dies while waiting', async () => {
    const before = await poolUntil(service, (s) => s.ready === 2);
    // A pooled kernel's top process (bwrap, unshare or python, started by the kernel launcher) works in the pool's
    // data dir; its parent (the launcher) does not.
    const inDataDir = (pid: number): boolean => {
      try {
        return readlinkSync(`/proc/${pid}/cwd`).startsWith(dataDir);
      } catch {
        return false;
      }
    };
    const pooled = descendants(process.pid).filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        return inDataDir(pid) && !inDataDir(ppid);
      } catch {
        return false;
      }
    });
    expect(pooled.length).toBeGreaterThanOrEqual(2);
    process.kill(pooled[0]!, 'SIGKILL');
    const after = await poolUntil(service, (s) => s.ready === 2 && s.started_total === before.started_total + 1);
    expect(after.healthy).toBe(true);
  });

  it('reports a pool that cannot start kernels as unhealthy, with the reason', async () => {
    const broken = new KernelService(
      testKernelSettings({
        dataDir: mkdtempSync(join(tmpdir(), 'stoa-pool-')),
        warmPool: 1,
        bootstrap: () => Promise.reject(new Error('tool modules failed to import')),
      }),
    );
    broken.onModuleInit();
    try {
      const s = await poolUntil(broken, (st) => st.failures_in_a_row >= 3, 30_000);
      expect(s).toMatchObject({ healthy: false, ready: 0, last_error: 'tool modules failed to import' });
      expect(broken.liveCount).toBe(0);
    } finally {
      await broken.onApplicationShutdown();
    }
  });

  it('grows to the burst it has seen (two starts at a time, up to its maximum) and forgets it after 10 minutes', async () => {
    const adaptive = new KernelService(
      testKernelSettings({ dataDir: mkdtempSync(join(tmpdir(), 'stoa-pool-')), warmPool: 1, warmPoolMax: 3 }),
    );
    adaptive.onModuleInit();
    try {
      await poolUntil(adaptive, (s) => s.ready === 1);
      const taken = [0, 1, 2, 3].map(() => adaptive.takeWarm()).filter((l) => l !== undefined);
      expect(taken).toHaveLength(1); // the burst found one ready kernel…
      await poolUntil(adaptive, (s) => s.starting === 2); // below a raised target it starts two at a time
      const grown = await poolUntil(adaptive, (s) => s.ready === 3, 30_000);
      expect(grown).toMatchObject({ size: 1, max: 3, target: 3 }); // …the next one of its size finds three
      expect(grown.starting).toBe(0);
      expect(adaptive.poolTarget(Date.now() + 11 * 60_000)).toBe(1);
      for (const l of taken) await l.kernel.close();
    } finally {
      await adaptive.onApplicationShutdown();
    }
  });
});
