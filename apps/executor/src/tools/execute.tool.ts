import { z } from 'zod';
import { isAppError } from '@stoa/core';
import type { ExecutionService } from '@stoa/execution';
import type { JobService } from '@stoa/jobs';
import { defineTool, integer, TaskCreated, ToolFailure, type ToolDefinition } from '@stoa/mcp';
import type { JobTasks } from '../tasks.backend';
import { stderrLogger } from './kernel-log';
import { SessionLimitError } from '@stoa/sessions';

export interface ExecuteToolOptions {
  name: string;
  description: string;
  defaultTimeout: number;
  maxTimeout: number;
  /** "Available tool functions" block, empty without tools. */
  catalogue: string;
  /** The code screen's "Disallowed actions" block, when the screen is on. */
  disallowed?: string;
  /**
   * Declare execution_session_id as `x-mcp-header` (clients then mirror it as `Mcp-Param-Execution-Session-Id` for
   * load balancers). The SDK server then rejects clients that do not mirror it, hence opt-in.
   */
  sessionHeader?: boolean;
}

/** The agent-facing usage text of `execute_{name}_code` (reference §1.2, plus stateless-client guidance). */
export function executeDescription(o: ExecuteToolOptions): string {
  const usage = [
    `Execute Python code in a persistent, sandboxed ${o.name} kernel. Variables, imports and functions persist across calls in the same session.`,
    "Sessions: pass a result's session_id back as execution_session_id to continue in that kernel (needed by stateless HTTP clients; it also resumes the session from another connection of yours). Without it, 2025-era clients keep one session per MCP connection; others get a fresh one.",
    "Files: write outputs under AGORA_OUTPUT_DIR (use agora_output('name.csv') for a path); new files are listed in artifacts.",
    'Output: stdout/stderr are truncated beyond a limit, so keep large data in variables and print summaries (df.head(), len(x)). A trailing expression is shown like a notebook Out.',
    'Returns JSON: description, stdout, stderr, execution_time, success, error, tool_calls, artifacts, session_id.',
  ].join('\n\n');
  return [o.description, usage, o.disallowed, o.catalogue].filter(Boolean).join('\n\n');
}

const sessionIdSchema = z
  .string()
  .nullable()
  .default(null)
  .describe('session_id from an earlier result, to continue that session');

/** `execute_{name}_code(code, description, timeout, execution_session_id)`. */
export function executeTool(
  o: ExecuteToolOptions,
  execution: ExecutionService,
  jobs: JobService,
  tasks: JobTasks,
): ToolDefinition {
  return defineTool({
    name: `execute_${o.name}_code`,
    description: executeDescription(o),
    input: z.object({
      code: z.string().describe('Python code to execute'),
      description: z.string().default('').describe('What this code does'),
      timeout: integer()
        .default(o.defaultTimeout)
        .describe(`Seconds before the run is interrupted (max ${o.maxTimeout}); variables survive an interrupt`),
      execution_session_id: o.sessionHeader
        ? sessionIdSchema.meta({ 'x-mcp-header': 'Execution-Session-Id' })
        : sessionIdSchema,
    }),
    annotations: { title: `Run Python in the ${o.name} kernel`, destructiveHint: false, openWorldHint: true },
    handler: async (args, ctx) => {
      try {
        const progress = ctx.progress ? progressReporter(ctx.progress) : undefined;
        const stderr = stderrLogger(o.name, ctx.log);
        try {
          const result = await execution.execute(ctx.principal, args, {
            transportSessionId: ctx.transportSessionId,
            onOutput: (stream, text) => {
              progress?.push(stream, text);
              stderr.push(stream, text);
            },
            signal: ctx.signal,
            policy: ctx.functionPolicy,
          });
          if ('job_id' in result)
            void ctx.log('notice', `The run continues as background job ${result.job_id}.`, `${o.name}.jobs`);
          // A client that declared the Tasks extension gets long work as an MCP task (task id = job id).
          if (ctx.tasksSupported && 'job_id' in result)
            return new TaskCreated(tasks.view(await jobs.getJob(ctx.principal, result.job_id)));
          return result;
        } finally {
          stderr.flush();
          await progress?.flush();
        }
      } catch (err) {
        // The reference answers handler errors with the full result shape (its 429 payload stays as is), flagged
        // isError: the tool failed (unknown session, refused argument), not the user's code.
        if (!isAppError(err) || err instanceof SessionLimitError) throw err;
        return new ToolFailure({
          description: args.description,
          stdout: '',
          stderr: '',
          execution_time: 0,
          success: false,
          error: err.message,
          tool_calls: [],
          displays: [],
          artifacts: [],
        });
      }
    },
  });
}

const PROGRESS_INTERVAL_MS = 250;
const PROGRESS_MAX_CHARS = 4000;

/**
 * Streams new output lines as MCP progress notifications, at most one every 250 ms, so clients that
 * sent a progressToken see live output of long runs.
 */
function progressReporter(send: (progress: number, message?: string) => Promise<void>) {
  let pending = '';
  let count = 0;
  let timer: NodeJS.Timeout | undefined;
  const flush = async (): Promise<void> => {
    clearTimeout(timer);
    timer = undefined;
    if (!pending) return;
    const text = pending.length > PROGRESS_MAX_CHARS ? `…${pending.slice(-PROGRESS_MAX_CHARS)}` : pending;
    pending = '';
    await send(++count, text).catch(() => undefined);
  };
  return {
    push: (_stream: 'stdout' | 'stderr', text: string): void => {
      pending += text;
      timer ??= setTimeout(() => void flush(), PROGRESS_INTERVAL_MS);
    },
    flush,
  };
}
