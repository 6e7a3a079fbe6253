import { ExecutionOutcome, OutputCapture, type ExecuteOptions, type KernelDirs, type KernelExecution, type KernelProcess, type KernelService } from '@stoa/kernel';
import type { CodeInputs } from '@stoa/transfer';

/** Why a cell is refused for its size before it reaches a kernel, or undefined when it may run. */
export function oversizedCode(code: string, maxBytes: number): string | undefined {
  const bytes = Buffer.byteLength(code, 'utf8');
  if (bytes <= maxBytes) return undefined;
  return (
    `Code is ${bytes.toLocaleString('en-US')} bytes; the limit is ${maxBytes.toLocaleString('en-US')} bytes (execution.max_code_bytes). ` +
    'Nothing ran and the session is unchanged. Split the work into smaller cells, or write large data to a file and load it from the code.'
  );
}

/**
 * One cell in a kernel with the pipeline's resolve step around it: asset tags and handles found in the code are
 * resolved first (an unresolvable one refuses the cell, nothing runs), objects the cell stashed are stored after;
 * the session's caps (disk quota, cgroup) are enforced around the run.
 */
export async function runCell(kernels: KernelService, inputs: CodeInputs | undefined, owner: string, kernel: KernelProcess, dirs: KernelDirs, code: string, opts: ExecuteOptions): Promise<KernelExecution> {
  const prep = inputs ? await inputs.prepare(owner, kernel, dirs, code) : {};
  if (prep.error) return refused(prep.error);
  const run = await kernels.guardCell(kernel, dirs, () => kernel.execute(code, prep.rewrite ? { ...opts, rewrite: prep.rewrite } : opts));
  await inputs?.collect(owner, dirs, run.stashed);
  return run;
}

export function refused(message: string): KernelExecution {
  return { outcome: ExecutionOutcome.completed, raised: true, rejected: message, stdout: new OutputCapture(0, 0), stderr: new OutputCapture(0, 0), displays: [], toolCalls: [], stashed: [], durationMs: 0 };
}
