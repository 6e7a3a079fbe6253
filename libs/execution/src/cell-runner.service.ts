import { Inject, Injectable, Optional } from '@nestjs/common';
import { inSpan } from '@stoa/activity';
import {
  ExecutionOutcome,
  KernelService,
  OutputCapture,
  type KernelDirs,
  type KernelExecution,
  type KernelProcess,
} from '@stoa/kernel';
import { SessionService, type SessionRuntime } from '@stoa/sessions';
import {
  type Artifact,
  artifactNote,
  changedArtifacts,
  type OutputSnapshot,
  snapshotOutputs,
  TransferLog,
  TransferRuntime,
} from '@stoa/transfer';
import {
  DEFAULT_MAX_CODE_BYTES,
  EXECUTION_SETTINGS,
  MAX_CAPTURE_CHARS,
  type ExecutionSettings,
} from './execution.config';
import type { FunctionPolicy } from './execution.types';
import { shapeResult, type ShapedRun } from './result-shape';

/** How one cell runs: its time limit, the gateway's function policy, where live output goes. */
export interface CellOptions {
  timeoutS: number;
  policy?: FunctionPolicy;
  onOutput?: (stream: 'stdout' | 'stderr', text: string) => void;
  /** A variable to read after the cell when it did not raise (a batch item's result), in the same round trip. */
  capture?: string;
}

/** A cell run in a session, with the files it wrote that were registered. */
export type SessionRun = KernelExecution & { artifacts: Artifact[] };

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
 * The one way a cell reaches a kernel (inline runs, background jobs, batch items): the size check, asset tags
 * and handles resolved first (an unresolvable one refuses the cell, nothing runs), the session's caps (disk
 * quota, cgroup) around the run, objects the cell stashed stored after; and the run shaped as the reference's result.
 */
@Injectable()
export class CellRunner {
  /**
   * Each session's output directory as its previous cell left it: the next cell's "before" without a second walk
   * (only the kernel writes there; what a background thread writes between cells counts for the next cell).
   */
  private readonly outputs = new WeakMap<SessionRuntime, OutputSnapshot>();

  constructor(
    @Inject(EXECUTION_SETTINGS) private readonly settings: ExecutionSettings,
    private readonly kernels: KernelService,
    private readonly sessions: SessionService,
    @Optional() private readonly transfer?: TransferRuntime,
    @Optional() private readonly transferLog?: TransferLog,
  ) {}

  /** Characters kept per stream (the truncation threshold, or a hard cap when truncation is off). */
  get captureChars(): number {
    return this.settings.truncationThreshold > 0 ? this.settings.truncationThreshold : MAX_CAPTURE_CHARS;
  }

  get maxCodeBytes(): number {
    return this.settings.maxCodeBytes ?? DEFAULT_MAX_CODE_BYTES;
  }

  /** Runs one cell in `kernel` for `owner`. */
  async run(
    owner: string,
    kernel: KernelProcess,
    dirs: KernelDirs,
    code: string,
    o: CellOptions,
  ): Promise<KernelExecution> {
    const tooLarge = oversizedCode(code, this.maxCodeBytes);
    if (tooLarge) return refused(tooLarge);
    const inputs = this.transfer?.inputs;
    const prep = inputs ? await inputs.prepare(owner, kernel, dirs, code) : {};
    if (prep.error) return refused(prep.error);
    const opts = {
      timeoutMs: o.timeoutS * 1000,
      graceMs: this.settings.interruptGraceMs,
      captureChars: this.captureChars,
      screen: this.kernels.screenOptions,
      policy: o.policy,
      onOutput: o.onOutput,
      capture: o.capture,
    };
    const run = await inSpan('kernel.execute', { attributes: { 'stoa.code.bytes': Buffer.byteLength(code) } }, () =>
      this.kernels.guardCell(kernel, dirs, () =>
        kernel.execute(code, prep.rewrite ? { ...opts, rewrite: prep.rewrite } : opts),
      ),
    );
    await inputs?.collect(owner, dirs, run.stashed);
    return run;
  }

  /** Runs a cell in a session's kernel under its lock; `keepArtifacts` says whether the files it wrote are registered. */
  inSession(
    runtime: SessionRuntime,
    code: string,
    o: CellOptions & { keepArtifacts: (run: KernelExecution) => boolean },
  ): Promise<SessionRun> {
    return runtime.lock.runExclusive(async () => {
      const { kernel } = await this.sessions.kernelFor(runtime);
      const before = this.outputs.get(runtime) ?? (await snapshotOutputs(runtime.dirs));
      this.outputs.delete(runtime);
      const run = await this.run(runtime.record.owner, kernel, runtime.dirs, code, o);
      if (!o.keepArtifacts(run)) return { ...run, artifacts: [] };
      const { artifacts, after } = await changedArtifacts(runtime.dirs, before);
      this.outputs.set(runtime, after);
      this.transferLog?.artifactsWritten(runtime.record.owner, runtime.record.id, artifacts); // for the admin API
      return { ...run, artifacts };
    });
  }

  /** A run as the reference's result with the files it wrote, and the reference's note when it succeeded with some. */
  shape(run: KernelExecution, timeoutS: number, artifacts: Artifact[] = []): ShapedRun {
    const { result, failure } = shapeResult(run, timeoutS, this.captureChars, this.settings.interruptGraceMs);
    const note = result.success && artifacts.length ? { note: artifactNote(artifacts, this.settings.serverName) } : {};
    return { result: { ...result, artifacts, ...note }, failure };
  }
}

/** A cell refused before it ran, as a run whose code raised. */
function refused(message: string): KernelExecution {
  return {
    outcome: ExecutionOutcome.completed,
    raised: true,
    rejected: message,
    stdout: new OutputCapture(0, 0),
    stderr: new OutputCapture(0, 0),
    displays: [],
    toolCalls: [],
    stashed: [],
    durationMs: 0,
  };
}
