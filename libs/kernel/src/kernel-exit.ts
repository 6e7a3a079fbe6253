import { constants as osConstants } from 'node:os';
import { ExecutionOutcome, type KernelExecution } from './kernel.types';

/** bwrap reports a child killed by signal N as exit code 128+N; turn that back into the signal. */
export function unwrapExit(
  code: number | null,
  signal: NodeJS.Signals | null,
  wrapped: boolean,
): { code: number | null; signal: NodeJS.Signals | null } {
  if (!wrapped || signal || code === null || code <= 128 || code > 128 + 64) return { code, signal };
  const name = Object.entries(osConstants.signals).find(([, n]) => n === code - 128)?.[0] as NodeJS.Signals | undefined;
  return name ? { code: null, signal: name } : { code, signal };
}

/** How a kernel process ended, for messages: "signal SIGKILL" or "exit code 1". */
export function describeExit(code: number | null, signal: NodeJS.Signals | null): string {
  return signal ? `signal ${signal}` : `exit code ${code}`;
}

/** Why an internal op that runs user code (dump, load) did not complete. */
export function unfinished(what: string, r: KernelExecution, timeoutMs: number): string {
  const limit = `${what} did not finish within ${timeoutMs / 1000}s`;
  switch (r.outcome) {
    case ExecutionOutcome.interrupted:
      return `${limit} and was interrupted; the kernel and its variables are kept.`;
    case ExecutionOutcome.killed:
      return `${limit}; the kernel ignored the interrupt and was killed, so its variables are lost.`;
    default:
      return `The kernel died during this step (${r.exit ? describeExit(r.exit.code, r.exit.signal) : 'unknown cause'}): ${what.charAt(0).toLowerCase()}${what.slice(1)} failed and the kernel's variables are lost.`;
  }
}
