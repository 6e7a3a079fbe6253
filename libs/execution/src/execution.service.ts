import { Inject, Injectable, Logger } from '@nestjs/common';
import { InvalidInputError, type Principal } from '@stoa/core';
import { describeExit, ExecutionOutcome, type KernelExecution } from '@stoa/kernel';
import { SessionService, type SessionRuntime } from '@stoa/sessions';
import { MAX_CAPTURE_CHARS } from './execution.config';
import type { ExecuteInput, ExecuteOrigin, ExecuteResult } from './execution.types';
import { truncateStderr, truncateStdout } from './truncation';

/** What the execution service needs from config. */
export interface ExecutionSettings {
  defaultTimeoutS: number;
  maxTimeoutS: number;
  truncationThreshold: number;
  interruptGraceMs: number;
}
export const EXECUTION_SETTINGS = Symbol('EXECUTION_SETTINGS');

const FAILED = 'Kernel execution failed';

/** The execute pipeline: resolve session → validate → run in the kernel → shape → truncate. */
@Injectable()
export class ExecutionService {
  private readonly logger = new Logger(ExecutionService.name);

  constructor(
    @Inject(EXECUTION_SETTINGS) private readonly settings: ExecutionSettings,
    private readonly sessions: SessionService,
  ) {}

  /** Picks the session for an execute call: explicit id, the legacy MCP session, or a new one. */
  async resolveSession(principal: Principal, input: ExecuteInput, origin: ExecuteOrigin): Promise<SessionRuntime> {
    const explicit = input.execution_session_id;
    if (explicit !== undefined && explicit !== null) return this.sessions.get(principal, explicit);
    const transport = origin.transportSessionId;
    if (transport) {
      const existing = this.sessions.find(principal, transport);
      if (existing) return existing;
      if (!this.sessions.isLive(transport)) return this.sessions.create(principal, { type: 'mcp_connection' }, transport);
    }
    return this.sessions.create(principal, { type: 'auto_created', tool: 'execute' });
  }

  /** Runs `input.code`; failures of the code are results (`success: false`), not exceptions. */
  async execute(principal: Principal, input: ExecuteInput, origin: ExecuteOrigin = {}): Promise<ExecuteResult> {
    const timeoutS = this.clampTimeout(input.timeout);
    if (!input.code || !input.code.trim()) {
      // Validation failure is a normal result (reference §1.2); no session is created for it.
      const sessionId = input.execution_session_id ? (await this.sessions.get(principal, input.execution_session_id)).record.id : undefined;
      return { ...emptyResult(), description: input.description ?? '', stderr: 'Code cannot be empty', error: 'Code cannot be empty', session_id: sessionId };
    }
    const runtime = await this.resolveSession(principal, input, origin);
    const base = { description: input.description ?? '', session_id: runtime.record.id };
    this.sessions.touch(runtime);
    return runtime.lock.runExclusive(async () => {
      const { kernel } = await this.sessions.kernelFor(runtime);
      const run = await kernel.execute(input.code, {
        timeoutMs: timeoutS * 1000,
        graceMs: this.settings.interruptGraceMs,
        captureChars: this.captureChars(),
        onOutput: origin.onOutput,
      });
      this.sessions.touch(runtime);
      return { ...this.shape(run, timeoutS), ...base };
    });
  }

  private clampTimeout(timeout: number | undefined): number {
    if (timeout === undefined || timeout === null) return Math.min(this.settings.defaultTimeoutS, this.settings.maxTimeoutS);
    if (!(timeout > 0)) throw new InvalidInputError('Timeout must be greater than 0 seconds.');
    return Math.min(timeout, this.settings.maxTimeoutS);
  }

  private captureChars(): number {
    return this.settings.truncationThreshold > 0 ? this.settings.truncationThreshold : MAX_CAPTURE_CHARS;
  }

  private shape(run: KernelExecution, timeoutS: number): Omit<ExecuteResult, 'description' | 'session_id'> {
    const limit = this.captureChars();
    const stdout = truncateStdout(run.stdout, limit);
    let stderr = truncateStderr(run.stderr, limit);
    const result = { ...emptyResult(), stdout, stderr, execution_time: round3(run.durationMs / 1000), tool_calls: run.toolCalls };
    switch (run.outcome) {
      case ExecutionOutcome.completed:
        return { ...result, success: !run.raised, error: run.raised ? FAILED : null };
      case ExecutionOutcome.interrupted:
        return {
          ...result,
          stderr: `Execution timeout after ${timeoutS}s. The code was interrupted; the session and variables defined before the interrupt are kept.`,
          error: FAILED,
        };
      case ExecutionOutcome.killed:
        return {
          ...result,
          stderr:
            `Execution timeout after ${timeoutS}s. The kernel did not respond to the interrupt within ` +
            `${this.settings.interruptGraceMs / 1000}s, so it was killed and restarted: all session state (variables, imports) was lost. ` +
            'The next call runs in a fresh kernel in the same session.',
          error: FAILED,
          kernel_restarted: true,
        };
      case ExecutionOutcome.died: {
        const how = run.exit ? describeExit(run.exit.code, run.exit.signal) : 'unknown cause';
        const hint = run.exit?.signal === 'SIGKILL' ? ' (SIGKILL usually means it ran out of memory)' : '';
        stderr += `${stderr && !stderr.endsWith('\n') ? '\n' : ''}The kernel process died while running this code (${how}${hint}). All session state (variables, imports) was lost; the next call starts a fresh kernel in the same session.`;
        this.logger.warn({ exit: run.exit }, 'kernel died during execution');
        return { ...result, stderr, error: FAILED, kernel_restarted: true };
      }
    }
  }

  /** Namespace summary for `inspect_session`; `busy` when an execution holds the session. */
  async inspect(runtime: SessionRuntime): Promise<{ busy: boolean; namespace: Record<string, { type: string; repr: string }> }> {
    if (runtime.lock.pending > 0) return { busy: true, namespace: {} };
    return runtime.lock.runExclusive(async () => {
      const kernel = runtime.kernel;
      if (!kernel?.alive) return { busy: false, namespace: {} };
      return { busy: false, namespace: (await kernel.inspect(10_000)) ?? {} };
    });
  }
}

function emptyResult(): Omit<ExecuteResult, 'description'> {
  return { stdout: '', stderr: '', execution_time: 0, success: false, error: FAILED, tool_calls: [], artifacts: [] };
}

function round3(n: number): number {
  return Math.round(n * 1000) / 1000;
}
