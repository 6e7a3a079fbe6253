import { chmodSync, existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startExecutor, type RunningExecutor } from '../../../test/support/executor-process';
import { REQUIRE_SERVICES } from '../../../test/support/databases';
import { pyCalls } from '../../../test/support/py-client';
import { devToken } from '../../../test/support/ts-clients';

const isRoot = process.geteuid?.() === 0;
// The host filesystem, so only the uids keep the two servers' kernels apart. `user: per_kernel` so that a
// no-op server never falls back to its own user; Debian's interpreter (readable by every uid) so that the
// host filesystem works without bubblewrap even where python3 sits under a closed home.
const sandbox = { network: 'inherit', filesystem: 'host', user: 'per_kernel', code_screen: 'off' }; // the screen refuses os.getcwd()
const config = { sandbox, environment: { python: '/usr/bin/python3' } };

/** Per-kernel uids need a root server (CI runs as root; elsewhere the suite says why it did not run). */
const runnable = isRoot && existsSync('/usr/bin/python3');
if (!runnable) {
  const why = 'the uid-lease e2e needs a root server and /usr/bin/python3';
  if (REQUIRE_SERVICES) throw new Error(`${why} (STOA_REQUIRE_SERVICES=1 makes this an error)`);
  console.warn(`uid-lease e2e skipped: ${why}.`);
}
/** A data dir every kernel uid can traverse (mkdtemp makes 0700 dirs). */
function openDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'stoa-uids-'));
  chmodSync(dir, 0o755);
  return join(dir, 'data');
}

describe.runIf(runnable)('two servers on one host lease kernel uids host-wide', () => {
  let a: RunningExecutor;
  let b: RunningExecutor;
  beforeAll(async () => {
    // The same uid range for both: without host-wide leases they would count from the same uid.
    a = await startExecutor({ dataDir: openDataDir(), config: { ...config, sessions: { warm_pool: 2 } } });
    b = await startExecutor({ dataDir: openDataDir(), config: { ...config, sessions: { warm_pool: 2 } } });
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
  });

  /** Three sessions (three callers: a stateless caller's execute without an id reuses its latest session). */
  const uidsOf = async (ex: RunningExecutor, user: string) => {
    const out = [];
    for (const i of [0, 1, 2]) {
      const [r] = await pyCalls(
        ex.mcpUrl,
        'auto',
        [{ tool: 'execute_demo_code', args: { code: 'import os; print(os.getuid(), os.getcwd())' } }],
        { token: devToken(`${user}-${i}`) },
      );
      const [uid, cwd] = (r!.json.stdout as string).trim().split(' ');
      out.push({ uid: Number(uid), cwd: cwd!, sid: r!.json.session_id as string, user: `${user}-${i}` });
    }
    return out;
  };

  it('hands out disjoint uids, each held by a lease file naming its server', async () => {
    const [ka, kb] = await Promise.all([uidsOf(a, 'alice'), uidsOf(b, 'bob')]);
    expect(new Set(ka.map((k) => k.sid)).size).toBe(3);
    const ua = new Set(ka.map((k) => k.uid));
    const ub = new Set(kb.map((k) => k.uid));
    expect(ua.size).toBe(3);
    expect(ub.size).toBe(3);
    expect([...ua].filter((u) => ub.has(u))).toEqual([]);
    for (const [uids, server] of [
      [ua, a],
      [ub, b],
    ] as const) {
      for (const uid of uids)
        expect(readFileSync(`/run/stoa/uids/${uid}`, 'utf8').trim()).toBe(String(server.proc.pid));
    }
  });

  it("a kernel of one server cannot read a file of the other server's kernel, given its path", async () => {
    const [victim] = await uidsOf(b, 'bob');
    await pyCalls(
      b.mcpUrl,
      'auto',
      [
        {
          tool: 'execute_demo_code',
          args: { code: "open('secret.txt', 'w').write('bob only')", execution_session_id: victim!.sid },
        },
      ],
      { token: devToken(victim!.user) },
    );
    const path = `${victim!.cwd}/secret.txt`;
    expect(existsSync(path)).toBe(true);
    const [r] = await pyCalls(
      a.mcpUrl,
      'auto',
      [{ tool: 'execute_demo_code', args: { code: `print(open(${JSON.stringify(path)}).read())` } }],
      { token: devToken('alice') },
    );
    expect(r!.json.success).toBe(false);
    expect(r!.json.stderr).toMatch(/PermissionError/);
  });

  it('refuses a third server on a data dir that is in use, naming the other pid and the fix', async () => {
    await expect(startExecutor({ dataDir: a.dataDir, config })).rejects.toThrow(
      new RegExp(`data dir .* is in use by another Stoa server \\(pid ${a.proc.pid}\\).*STOA_DATA_DIR`, 's'),
    );
  });

  it('gives the leases back on shutdown', async () => {
    const [k] = await uidsOf(a, 'alice');
    const other = await startExecutor({ dataDir: openDataDir(), config: { ...config, sessions: { warm_pool: 0 } } });
    const [mine] = await uidsOf(other, 'carol');
    expect(existsSync(`/run/stoa/uids/${mine!.uid}`)).toBe(true);
    await other.stop();
    expect(existsSync(`/run/stoa/uids/${mine!.uid}`)).toBe(false);
    expect(existsSync(`/run/stoa/uids/${k!.uid}`)).toBe(true);
  });
});
