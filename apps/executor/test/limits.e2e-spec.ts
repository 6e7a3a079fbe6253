import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { discoverHierarchies } from '@stoa/kernel';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startExecutor, type RunningExecutor } from '../../../test/support/executor-process';
import { bubblewrapAvailable, cgroupsWritable, testSandbox } from '../../../test/support/sandbox';
import { v2Client, type TestClient } from '../../../test/support/ts-clients';

interface ExecResult {
  stdout: string;
  stderr: string;
  success: boolean;
  error: string | null;
  session_id: string;
}

/**
 * The secure sandbox where bubblewrap runs, else the test sandbox of a machine without it (cgroups and the disk
 * quota need no bubblewrap; only the private /tmp does).
 */
const SANDBOX = testSandbox(); // network: none either way

/** One executor with `limits` (and `sandbox` over SANDBOX), an MCP client, and a helper that runs a cell. */
function limitedServer(
  limits: Record<string, unknown>,
  env: Record<string, string> = {},
  sandbox: Record<string, unknown> = {},
) {
  const ctx = {} as { ex: RunningExecutor; c: TestClient };
  beforeAll(async () => {
    ctx.ex = await startExecutor({ config: { sandbox: { ...SANDBOX, ...sandbox, limits } }, env });
    ctx.c = await v2Client(ctx.ex.mcpUrl, 'auto');
  });
  afterAll(async () => {
    await ctx.c?.close();
    await ctx.ex?.stop();
  });
  const exec = async (code: string, extra: Record<string, unknown> = {}) =>
    (await ctx.c.call('execute_demo_code', { code, timeout: 100, ...extra })).json as unknown as ExecResult;
  const health = async () =>
    (await (await fetch(`${ctx.ex.url}/health`)).json()) as {
      status: string;
      sandbox: { limits: Record<string, string> };
    };
  return { ctx, exec, health };
}

// Four children that each hold 1.5 GB at the same time; each says "held" once its block is filled, then waits
// for its stdin to close. The parent prints the exit codes.
const FOUR_HOGS = `
import subprocess, sys
child = "import sys\\nb = b'A' * (1536 << 20)\\nprint('held', flush=True)\\nsys.stdin.read()"
ps = [subprocess.Popen([sys.executable, '-c', child], stdin=subprocess.PIPE, stdout=subprocess.PIPE) for _ in range(4)]
held = [p.stdout.readline() == b'held\\n' for p in ps]
for p in ps:
    try:
        p.stdin.close()
    except BrokenPipeError:
        pass
print(sum(held), [p.wait() for p in ps])
`;

// Forks children that block on a pipe until the parent closes it, until fork fails or 1000 are running.
const FORK_BOMB = `
import os
r, w = os.pipe()
kids, err = [], None
try:
    while len(kids) < 1000:
        pid = os.fork()
        if pid == 0:
            os.close(w)
            os.read(r, 1)
            os._exit(0)
        kids.append(pid)
except OSError as e:
    err = e.errno
os.close(w)
for pid in kids:
    os.waitpid(pid, 0)
print(len(kids), err)
`;

describe.runIf(cgroupsWritable())('per-session memory and process caps (cgroups)', () => {
  // Each child fits its RLIMIT_AS (2048 MiB) but not the session's 1024 MiB; RLIMIT_NPROC off: the session's pids
  // cap alone must stop the fork bomb. Info logs for the start-up line.
  const { ctx, exec, health } = limitedServer(
    { memory_mb: 2048, session_memory_mb: 1024, session_processes: 64, processes: 0 },
    { LOG_LEVEL: 'info' },
  );

  it('lists the active session caps on /health and in the start-up log', async () => {
    const limits = (await health()).sandbox.limits;
    expect(limits.session_memory).toMatch(/^1024 MiB per session \(cgroup v[12]\)$/);
    expect(limits.session_processes).toMatch(/^64 processes per session \(cgroup v[12]\)$/);
    expect(ctx.ex.logs()).toContain('kernel resource limits');
  });

  it('stops 4 children of 1.5 GB in one session at the session memory cap and says so', async () => {
    const r = await exec(FOUR_HOGS);
    const [held, codes] = [Number(r.stdout.split(' ')[0]), r.stdout.slice(r.stdout.indexOf('['))];
    expect(held).toBeLessThan(4);
    expect(codes).toContain('-9');
    expect(r.success).toBe(false);
    expect(r.stderr).toContain("The session's memory cap (1024 MiB");
    expect(r.stderr).toContain('out-of-memory killer ended');
  });

  it('keeps the server and other sessions running after one session hit its memory cap', async () => {
    const other = await exec('x = 40 + 2\nx');
    const hog = await exec(FOUR_HOGS);
    expect(hog.success).toBe(false);
    expect((await exec('x', { execution_session_id: other.session_id })).stdout).toBe('42\n');
    expect((await exec('"same kernel"', { execution_session_id: hog.session_id })).success).toBe(true);
    expect((await health()).status).toBe('healthy');
  });

  it('stops a fork bomb at the session process cap (RLIMIT_NPROC off) and says so', async () => {
    const r = await exec(FORK_BOMB);
    const [count, errno] = r.stdout.trim().split(' ');
    expect(Number(count)).toBeLessThan(64);
    expect(errno).toBe('11'); // EAGAIN
    expect(r.stderr).toContain("The session's process cap (64 processes and threads");
  });
});

/** This host's memory/pids cgroup directories that belong to the server with `pid` (`stoa-{hash}-{pid}`). */
function serverCgroups(pid: number): string[] {
  return discoverHierarchies().flatMap((h) =>
    readdirSync(h.own)
      .filter((n) => n.endsWith(`-${pid}`) && n.startsWith('stoa-'))
      .map((n) => join(h.own, n)),
  );
}

describe.runIf(cgroupsWritable())('session cgroups are cleaned up', () => {
  const start = (dataDir: string) => startExecutor({ dataDir, config: { sandbox: SANDBOX } });

  it('removes every session cgroup of the server on shutdown', async () => {
    const ex = await start(join(mkdtempSync(join(tmpdir(), 'stoa-limits-')), 'data'));
    const c = await v2Client(ex.mcpUrl, 'auto');
    expect(((await c.call('execute_demo_code', { code: '1' })).json as unknown as ExecResult).success).toBe(true);
    const dirs = serverCgroups(ex.proc.pid!);
    expect(dirs.length).toBeGreaterThan(0);
    await c.close();
    await ex.stop();
    expect(dirs.filter((d) => existsSync(d))).toEqual([]);
  });

  it("removes a session's cgroups once the session is closed, while the server runs on", async () => {
    const ex = await startExecutor({
      dataDir: join(mkdtempSync(join(tmpdir(), 'stoa-limits-')), 'data'),
      config: { sandbox: SANDBOX, sessions: { warm_pool: 0 } }, // no pooled kernel: every leaf is the session's
    });
    const leaves = () => serverCgroups(ex.proc.pid!).flatMap((d) => readdirSync(d).filter((n) => /-\d+$/.test(n)));
    try {
      const c = await v2Client(ex.mcpUrl, 'auto');
      const r = (await c.call('execute_demo_code', { code: '1' })).json as unknown as ExecResult;
      expect(r.success).toBe(true);
      expect(leaves().length).toBeGreaterThan(0); // one per controller hierarchy (v1: memory and pids)
      expect((await c.call('demo_close_session', { session_id: r.session_id })).json).toMatchObject({ success: true });
      await expect.poll(leaves, { timeout: 5000 }).toEqual([]);
      await c.close();
    } finally {
      await ex.stop();
    }
  });

  it('removes the cgroups a SIGKILLed server left behind at the next start on the same data dir', async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), 'stoa-limits-')), 'data');
    const first = await start(dataDir);
    const stale = serverCgroups(first.proc.pid!);
    expect(stale.length).toBeGreaterThan(0);
    await first.stop('SIGKILL');
    expect(stale.every((d) => existsSync(d))).toBe(true);
    const second = await start(dataDir);
    expect(stale.filter((d) => existsSync(d))).toEqual([]);
    await second.stop();
  });
});

describe.runIf(bubblewrapAvailable())('private /tmp size (bubblewrap)', () => {
  const { exec, health } = limitedServer({}, {}, { filesystem: 'confined' });

  it('lists the /tmp size on /health', async () => {
    expect((await health()).sandbox.limits.tmp).toBe('private tmpfs of 512 MiB');
  });

  it('stops a 2 GB write to /tmp at the default tmpfs size (512 MiB) with ENOSPC', async () => {
    const r = await exec(
      'import os\nn, err = 0, None\nchunk = b"A" * (16 << 20)\ntry:\n    with open("/tmp/big", "wb") as f:\n        while n < (2 << 30):\n            f.write(chunk); f.flush(); n += len(chunk)\n' +
        'except OSError as e:\n    err = e.errno\nos.remove("/tmp/big")\nprint(n >> 20, err)',
    );
    const [mib, errno] = r.stdout.trim().split(' ');
    expect(Number(mib)).toBeLessThanOrEqual(512);
    expect(errno).toBe('28');
  });
});

describe('session disk quota (with or without bubblewrap)', () => {
  const { exec, health } = limitedServer({ disk_mb: 32, disk_check_ms: 200, file_size_mb: 0 });

  it('lists the disk quota on /health', async () => {
    expect((await health()).sandbox.limits.disk).toMatch(/^32 MiB \/ 100000 files per session directory/);
  });

  it('fails a cell that writes past the disk quota in the work dir and says how to get back under it', async () => {
    const r = await exec('with open("blob", "wb") as f:\n    f.write(b"A" * (100 << 20))');
    expect(r.success).toBe(false);
    expect(r.stderr).toContain('over its disk quota of 32 MiB');
    expect(r.stderr).toContain('Delete files');
    const cleanup = await exec('import os\nos.remove("blob")', { execution_session_id: r.session_id });
    expect(cleanup.success).toBe(true);
  });

  it('interrupts a long cell as soon as it grows the work dir past the quota; the session keeps its variables', async () => {
    const s = await exec('keep = 7');
    const r = await exec(
      'import os, time\nn = 0\nwith open("slow", "wb") as f:\n    while n < (2 << 30):\n        f.write(b"A" * (1 << 20)); f.flush(); os.fsync(f.fileno()); n += 1 << 20\n        time.sleep(0.005)',
      { execution_session_id: s.session_id },
    );
    expect(r.stderr).toContain('KeyboardInterrupt');
    expect(r.stderr).toContain('the cell was interrupted');
    const after = await exec('import os\nsize = os.path.getsize("slow") >> 20\nos.remove("slow")\nprint(keep, size)', {
      execution_session_id: s.session_id,
    });
    const [keep, size] = after.stdout.trim().split(' ');
    expect(keep).toBe('7');
    expect(Number(size)).toBeLessThan(256);
  });
});
