import { z } from 'zod';
import type { Principal } from '@stoa/core';
import { batchItemCodes, type BatchRunner, type ExecutionService } from '@stoa/execution';
import { batchCounts, isTerminal, JobStatus, type JobRecord, type JobService } from '@stoa/jobs';
import { defineTool, integer, type ToolDefinition } from '@stoa/mcp';
import type { SessionService } from '@stoa/sessions';
import type { BatchItemData } from '../batch.processor';

const secs = (ms: number): number => Math.round(ms) / 1000;

function elapsed(job: JobRecord): number {
  const start = job.startedAt ?? job.createdAt;
  return secs((job.completedAt ?? Date.now()) - start);
}

/** `{name}_check_job` payload (reference §1.3); queued items report `running` as the reference does. */
export function checkJobPayload(job: JobRecord): Record<string, unknown> {
  const terminal = isTerminal(job.status);
  const out: Record<string, unknown> = {
    job_id: job.id,
    session_id: job.sessionId,
    status: job.status === JobStatus.queued ? JobStatus.running : job.status,
    elapsed_seconds: elapsed(job),
    stdout: job.stdout,
    stderr: job.stderr,
  };
  if (job.promoted) out.promoted = true;
  if (terminal) {
    out.success = job.status === JobStatus.completed;
    if (job.error) out.error = job.error;
    const calls = (job.result as { tool_calls?: unknown[] } | null)?.tool_calls;
    if (calls?.length) out.tool_calls = calls;
  }
  return out;
}

/** `{name}_check_batch` payload (reference §5.4), readable until retention ends. */
export function batchPayload(
  batchId: string,
  parentSessionId: string,
  resultVariable: string,
  jobs: JobRecord[],
  forcePartial = false,
): Record<string, unknown> {
  const { completed, running, failed } = batchCounts(jobs.map((j) => ({ status: j.status, count: 1 })));
  const status = running ? 'running' : failed || forcePartial ? 'partial_failure' : 'completed';
  return {
    batch_id: batchId,
    parent_session_id: parentSessionId,
    status,
    completed,
    running,
    failed,
    jobs: jobs.map((j) => {
      const item: Record<string, unknown> = {
        job_id: j.id,
        session_id: j.sessionId,
        status: j.status === JobStatus.queued ? JobStatus.running : j.status,
        input_index: j.inputIndex,
      };
      if (!isTerminal(j.status)) return { ...item, elapsed_seconds: j.startedAt ? elapsed(j) : 0 };
      return {
        ...item,
        result_variable: resultVariable,
        result: j.payload ?? null,
        ...(j.result ? { execution: j.result } : {}),
        ...(j.error && !j.result ? { error: j.error } : {}),
      };
    }),
  };
}

/** check_job and the three parallel tools (a new batch's progress goes to the activity dashboard). */
export function jobTools(
  name: string,
  jobs: JobService,
  sessions: SessionService,
  execution: ExecutionService,
  batches: BatchRunner,
  limits: { maxTimeout: number; maxInputs: number },
): ToolDefinition[] {
  const { maxTimeout, maxInputs } = limits;
  const batchView = async (principal: Principal, batchId: string, forcePartial = false) => {
    const { batch, jobs: items } = await jobs.getBatch(principal, batchId);
    return batchPayload(batch.id, batch.parentSessionId, batch.resultVariable, items, forcePartial);
  };
  const idArg = (what: string) => z.object({ [`${what}_id`]: z.string().describe(`The ${what}_id returned earlier`) });
  return [
    defineTool({
      name: `${name}_check_job`,
      description: `Check a background job of execute_${name}_code (async mode or a promoted long run): status, elapsed_seconds, stdout/stderr so far; once finished also success, error, tool_calls.`,
      input: idArg('job') as z.ZodObject<{ job_id: z.ZodString }>,
      annotations: { readOnlyHint: true },
      handler: async ({ job_id }, ctx) => checkJobPayload(await jobs.getJob(ctx.principal, job_id)),
    }),
    defineTool({
      name: `${name}_parallel_execute`,
      description:
        "Run one code template once per input dict, in parallel: each dict's keys become variables, " +
        `each item runs in a fresh kernel, result_variable is collected. Returns a batch_id for ${name}_check_batch / ${name}_cancel_batch (timeout per item, max ${maxTimeout}s).`,
      input: z.object({
        code: z.string().describe('Code template run once per input'),
        inputs: z
          .array(z.record(z.string(), z.unknown()))
          .describe(`1 to ${maxInputs} dicts; keys must be Python identifiers`),
        timeout: integer().default(3600).describe('Seconds per item'),
        result_variable: z.string().default('result').describe('Variable collected from each item (empty: none)'),
      }),
      handler: async ({ code, inputs, timeout, result_variable }, ctx) => {
        const timeoutS = execution.clampTimeout(timeout, 3600);
        const codes = batchItemCodes(code, inputs, result_variable, maxInputs);
        // A 2025-era client's batch belongs to its MCP session; a stateless call gets a parent id without a
        // live session, so batches never fill the session cap.
        const parentId = ctx.transportSessionId
          ? (
              await execution.resolveSession(
                ctx.principal,
                { code: '' },
                { transportSessionId: ctx.transportSessionId },
              )
            ).record.id
          : sessions.ids.mint();
        const items = codes.map((itemCode) => {
          const sessionId = sessions.ids.mint();
          const data: BatchItemData = {
            owner: ctx.principal.id,
            sessionId,
            code: itemCode,
            timeoutS,
            resultVariable: result_variable,
            policy: ctx.functionPolicy,
          };
          return { sessionId, data };
        });
        const { batch, jobs: created } = await jobs.createBatch(ctx.principal.id, parentId, result_variable, items);
        batches.batchCreated(batch);
        return {
          batch_id: batch.id,
          jobs: created.map((j) => ({
            job_id: j.id,
            session_id: j.sessionId,
            status: 'running',
            input_index: j.inputIndex,
          })),
        };
      },
    }),
    defineTool({
      name: `${name}_check_batch`,
      description: 'Check aggregate status and available results for a parallel batch',
      input: idArg('batch') as z.ZodObject<{ batch_id: z.ZodString }>,
      annotations: { readOnlyHint: true },
      handler: ({ batch_id }, ctx) => batchView(ctx.principal, batch_id),
    }),
    defineTool({
      name: `${name}_cancel_batch`,
      description: 'Cancel all running jobs in a parallel batch and clean up child sessions',
      input: idArg('batch') as z.ZodObject<{ batch_id: z.ZodString }>,
      annotations: { destructiveHint: true, idempotentHint: true },
      handler: async ({ batch_id }, ctx) => {
        await jobs.cancelBatch(ctx.principal, batch_id);
        return batchView(ctx.principal, batch_id, true);
      },
    }),
  ];
}
