/** Kernel config schemas (environment:, timing) and the secret-name filter. */
export { kernelEnvironmentFields, kernelTimingSchema } from './kernel.config';
/** Kernel errors. */
export { KernelDeadError, KernelStartError } from './kernel.errors';
/** One kernel process (driver over pipes, own process group). */
export { KernelProcess } from './kernel-process';
export { describeExit } from './kernel-exit';
/** Starts and reaps kernels. */
export { KernelService, type KernelSettings } from './kernel.service';
/** Nest module for the kernel service. */
export { KernelModule } from './kernel.module';
/** Kernel environment allow-list. */
export { buildKernelEnv } from './kernel-env';
/** Interpreter resolution. */
export { type PythonInfo } from './python';
/** Execution result types. */
export {
  ExecutionOutcome,
  type DumpResult,
  type ExecuteOptions,
  type KernelDisplay,
  type KernelExecution,
  type LoadResult,
  type RewriteTarget,
  type Serializer,
  type StreamText,
  type ToolCallRecord,
  type ToolSpec,
} from './kernel.types';
/** Bounded output capture. */
export { OutputCapture } from './output-capture';
/** Sandbox config, launch plans and kernel directories. */
export { sandboxConfigSchema, type SandboxConfig } from './sandbox.config';
export { type KernelDirs, type LaunchSpec } from './sandbox';
/** The first directory on a path that other users cannot traverse (what stops a per-kernel uid). */
export { closedAncestor } from './mount-plan';
/** Kernel-side transfer files: where stash() writes handles, and handing host-written files to a kernel. */
export { giveToKernel, kernelDirs, prepareDirs, stashDir } from './sandbox';
/** Warm pool. */
export { type KernelLease, type PoolStatus } from './kernel-pool';
/** Host-wide kernel uid leases (one file per uid) and the one-server-per-data-dir lock. */
export { UidLeases, type UidLeaseOptions } from './uid-lease';
export { lockDataDir } from './data-dir-lock';
/** Per-session caps: cgroups (memory, processes) and the disk quota of a session's directory. */
export { Cgroups, type CgroupCounters } from './cgroup';
export { discoverHierarchies } from './cgroup-hierarchy';
export { type DiskUsage } from './session-limits';
