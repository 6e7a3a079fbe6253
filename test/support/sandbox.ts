import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cgroups } from '@stoa/kernel';
import { REQUIRE_SERVICES } from './databases';

/** Whether bubblewrap runs on this machine (STOA_BWRAP names the binary, as for the server). */
export const HAS_BWRAP = spawnSync(process.env.STOA_BWRAP ?? 'bwrap', ['--version']).status === 0;

/**
 * The sandbox for tests that are not about the sandbox: the secure default where bubblewrap runs, else what
 * the demo gets on a machine without it (`network: none` through unshare, the host filesystem), with the
 * code screen off as under the default and the server's own user named explicitly (Entra suites refuse the
 * implicit fallback, as a shared server must), so they pass on a fresh machine too.
 */
export function testSandbox(): Record<string, unknown> {
  return HAS_BWRAP ? {} : { network: 'none', filesystem: 'host', user: 'server', code_screen: 'off' };
}

/**
 * For suites that truly need bubblewrap (namespaces, confined filesystem): true when it runs; locally false
 * with the reason printed; in CI (`STOA_REQUIRE_SERVICES=1`) a missing bubblewrap throws instead of skipping.
 */
export function bubblewrapAvailable(): boolean {
  if (HAS_BWRAP) return true;
  const why = 'bubblewrap (bwrap) is not installed: apt-get install bubblewrap to run the sandbox suites';
  if (REQUIRE_SERVICES && process.env.STOA_FRESH_MACHINE !== '1')
    throw new Error(`${why} (STOA_REQUIRE_SERVICES=1 makes this an error)`);
  console.warn(`sandbox tests skipped: ${why}.`);
  return false;
}

/**
 * For suites about per-session cgroup caps: true when this process can create memory and pids cgroups (a
 * root server with a writable hierarchy). Locally false with the reason printed; in CI (`STOA_REQUIRE_SERVICES=1`)
 * unwritable cgroups throw instead of skipping.
 */
export function cgroupsWritable(): boolean {
  const probe = new Cgroups({ memoryBytes: 64 << 20, pids: 16 }, join(tmpdir(), `stoa-cgroup-probe-${process.pid}`));
  const active = probe.active();
  probe.removeAllSync();
  if (active.memory && active.pids) return true;
  const why = `cgroups are not writable here (${[...probe.inactive.values()].join('; ') || 'no memory/pids controller'})`;
  if (REQUIRE_SERVICES) throw new Error(`${why} (STOA_REQUIRE_SERVICES=1 makes this an error)`);
  console.warn(`cgroup tests skipped: ${why}.`);
  return false;
}
