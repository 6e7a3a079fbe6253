import { Logger } from '@nestjs/common';
import { tokenlessPrincipal, type Principal } from '@stoa/core';
import type { SessionRuntime } from '@stoa/sessions';
import type { ExecuteCall, ExecuteResult } from './execution.types';

/**
 * What a hook sees of the call: frozen copies of the caller and the session. A hook can refuse or rewrite
 * code and reshape a result, never change who owns the session or how the kernel is sandboxed (neither the
 * session object nor the sandbox settings are reachable from here; the bearer token is left out).
 */
export interface HookContext {
  readonly serverName: string;
  readonly principal: Readonly<Omit<Principal, 'token'>>;
  readonly session: Readonly<{ id: string; owner: string; createdAt: number; lastUsedAt: number }>;
  readonly description: string;
}

/**
 * The reference's `validate_code` / `preprocess_code` / `postprocess_result` overrides. Each is optional; each
 * runs for `execute_{name}_code` where the reference runs it: validate and preprocess after the session is
 * chosen and before the kernel sees the code, postprocess on the shaped result (inline and background runs).
 */
export interface ExecutionHooks {
  /** A refusal message for the agent (nothing runs, the session is unchanged), or nothing to let the code run. */
  validate?(code: string, ctx: HookContext): string | undefined | void | Promise<string | undefined | void>;
  /** The code the kernel runs instead of `code` (e.g. an import prepended). */
  preprocess?(code: string, ctx: HookContext): string | Promise<string>;
  /** The result the agent gets; its `session_id` is restored afterwards whatever the hook returns. */
  postprocess?(result: ExecuteResult, ctx: HookContext): ExecuteResult | Promise<ExecuteResult>;
}

/** Injection token of an executor's {@link ExecutionHooks}. */
export const EXECUTION_HOOKS = Symbol('EXECUTION_HOOKS');

/** What the pipeline does with the code: run this text, or answer with this refusal. */
export type HookedCode = { code: string } | { refusal: string };

/** Runs the configured hooks; a hook that throws becomes an agent-facing message, never a broken session. */
export class HookRunner {
  private readonly logger = new Logger('ExecutionHooks');

  constructor(
    private readonly serverName: string,
    private readonly hooks: ExecutionHooks = {},
  ) {}

  /** validate, then preprocess. */
  async before(call: Omit<ExecuteCall, 'code'>, code: string): Promise<HookedCode> {
    const hooks = this.hooks;
    if (!hooks.validate && !hooks.preprocess) return { code };
    const ctx = this.context(call);
    try {
      const refusal = hooks.validate ? await hooks.validate(code, ctx) : undefined;
      if (typeof refusal === 'string' && refusal) return { refusal };
    } catch (err) {
      return { refusal: this.failed('validate', err, 'Nothing ran') };
    }
    if (!hooks.preprocess) return { code };
    try {
      const rewritten = await hooks.preprocess(code, ctx);
      if (typeof rewritten !== 'string')
        return { refusal: this.failed('preprocess', new Error('it returned no code'), 'Nothing ran') };
      return { code: rewritten };
    } catch (err) {
      return { refusal: this.failed('preprocess', err, 'Nothing ran') };
    }
  }

  /** postprocess; a failing hook withholds the result (it may be what the hook was there to redact). */
  async after(call: Omit<ExecuteCall, 'code'>, result: ExecuteResult): Promise<ExecuteResult> {
    if (!this.hooks.postprocess) return result;
    const sessionId = call.runtime.record.id;
    try {
      const out = await this.hooks.postprocess(structuredClone(result), this.context(call));
      return { ...out, session_id: sessionId };
    } catch (err) {
      const message = this.failed('postprocess', err, 'The code ran (the session keeps its state), but its result');
      return { ...result, stdout: '', stderr: message, success: false, error: message, session_id: sessionId };
    }
  }

  private failed(hook: string, err: unknown, what: string): string {
    const why = err instanceof Error ? err.message : String(err);
    this.logger.warn({ server: this.serverName, hook, error: why }, 'execution hook failed');
    const tail = what === 'Nothing ran' ? 'Nothing ran and the session is unchanged' : `${what} is withheld`;
    return `The ${this.serverName} server's ${hook} hook failed: ${why}. ${tail}. Adjust the code and try again in the same session, or ask the server's operator about the hook.`;
  }

  private context(call: Omit<ExecuteCall, 'code'>): HookContext {
    return Object.freeze({
      serverName: this.serverName,
      principal: tokenlessPrincipal(call.principal),
      session: frozenSession(call.runtime),
      description: call.description,
    });
  }
}

function frozenSession(r: SessionRuntime): HookContext['session'] {
  const { id, owner, createdAt, lastUsedAt } = r.record;
  return Object.freeze({ id, owner, createdAt, lastUsedAt });
}
