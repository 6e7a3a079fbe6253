import { z } from 'zod';
import { nonNegative, positiveInt } from '@stoa/config';

/**
 * `sandbox.limits:` — rlimits applied inside every kernel process before user code runs, and caps on the whole
 * session (every process of one kernel together, its private /tmp, its files). 0 = unlimited.
 */
const limitsSchema = z
  .strictObject({
    /** Address space (RLIMIT_AS) in MiB; numpy/pandas need more than 256, so the default is 2048. */
    memory_mb: nonNegative.default(2048),
    /** Processes/threads of the kernel's user (RLIMIT_NPROC): fork bombs hit this. Applied when kernels run under their own uid. */
    processes: nonNegative.default(256),
    /** Largest file a kernel may write (RLIMIT_FSIZE), MiB. */
    file_size_mb: nonNegative.default(1024),
    /** Open file descriptors (RLIMIT_NOFILE). */
    open_files: nonNegative.default(1024),
    /**
     * Memory of the whole session (all its processes, and its private /tmp pages), MiB: a cgroup's memory.max
     * (v2) or memory.limit_in_bytes (v1). Needs a writable cgroup hierarchy (root server); the start-up log and
     * /health say whether it is active. Past it the kernel's OOM killer ends the session's largest process.
     */
    session_memory_mb: nonNegative.default(4096),
    /** Processes and threads of the whole session together (cgroup pids.max), whatever their uid. */
    session_processes: nonNegative.default(512),
    /** Size of the kernel's private /tmp (a tmpfs held in RAM, counted in session_memory_mb), MiB. */
    tmp_size_mb: nonNegative.default(512),
    /**
     * Disk quota of the session's directory (HOME, work/, outputs/), MiB. Checked after every cell and every
     * `disk_check_ms` during one: a cell that grows the directory past it is interrupted (killed if it goes on).
     */
    disk_mb: nonNegative.default(4096),
    /** Files and directories in the session's directory. */
    disk_files: nonNegative.default(100_000),
    /** How often a running cell's disk use is measured, ms. */
    disk_check_ms: positiveInt.min(100).default(1000),
  })
  .prefault({});

/**
 * `sandbox:` in a server YAML (ARCHITECTURE.md §3.3). The defaults are the secure ones: no network and a
 * confined filesystem. Both need bubblewrap; a host that cannot provide them stops the server at start.
 */
export const sandboxConfigSchema = z
  .strictObject({
    /** `none`: kernels get their own network namespace (no route anywhere, not even 127.0.0.1) and no host unix sockets. */
    network: z.enum(['inherit', 'none']).default('none').meta({ env: 'STOA_SANDBOX_NETWORK' }),
    /** `confined`: read-only host view, private /tmp, the server's data dir hidden, only the session's directories writable. */
    filesystem: z.enum(['host', 'confined']).default('confined').meta({ env: 'STOA_SANDBOX_FILESYSTEM' }),
    /**
     * Who kernels run as. `auto`: when the server runs as root, each kernel gets its own unprivileged uid from
     * `uid_base`…`uid_base+uid_count-1`; otherwise the server's user. Where that is impossible (no bubblewrap and
     * an interpreter under a home other users cannot enter), a no-op-auth development server runs kernels as its
     * own user and says so at start; a server with real auth refuses to start. `per_kernel`: per-kernel uids or
     * refuse to start, whatever the auth. `server`: always the server's user (as root this runs user code as
     * root — only for single-user machines).
     */
    user: z.enum(['auto', 'per_kernel', 'server']).default('auto').meta({ env: 'STOA_SANDBOX_USER' }),
    uid_base: positiveInt.min(1000).default(200_000),
    uid_count: positiveInt.default(10_000),
    /**
     * Host-wide directory of uid leases, shared by every Stoa server on the machine so none hands out a uid
     * another one uses (one file per uid; on tmpfs, so a reboot frees them).
     */
    uid_lease_dir: z.string().startsWith('/').default('/run/stoa/uids'),
    /** Extra host paths hidden from kernels (an empty tmpfs or /dev/null is mounted over them). */
    hidden_paths: z.array(z.string()).default([]),
    limits: limitsSchema,
    /**
     * The reference's AST screen (blocked imports, calls and paths) as agent guidance. `auto`: on unless the
     * filesystem is confined (kernels then see only their own directories). Security never rests on it.
     */
    code_screen: z.enum(['auto', 'on', 'off']).default('auto').meta({ env: 'STOA_CODE_SCREEN' }),
    /** Absolute path prefixes the code screen accepts in string literals. */
    allowed_path_prefixes: z.array(z.string().startsWith('/')).default(['/tmp']),
  })
  .prefault({});
export type SandboxConfig = z.output<typeof sandboxConfigSchema>;

/** True when the config asks for OS isolation (and therefore bubblewrap). */
export function needsNamespaces(c: SandboxConfig): boolean {
  return c.network === 'none' || c.filesystem === 'confined';
}

/** Whether the AST screen runs for this config. */
export function codeScreenOn(c: SandboxConfig): boolean {
  return c.code_screen === 'on' || (c.code_screen === 'auto' && c.filesystem !== 'confined');
}
