import { z } from 'zod';

/**
 * `_meta` key of a tool result naming the ids it created or refers to (an execution session, a job, a batch).
 * Connectors route and audit by these instead of reading the result's JSON text, which stays the reference's
 * byte for byte (`_meta` is not shown to models, unlike `structuredContent` in some clients).
 */
export const RESULT_REFS_META = 'stoa/refs';

const REF_KEYS = ['session_id', 'job_id', 'batch_id'] as const;
/** Upstream results are untrusted: ids are short strings or they are ignored. */
const id = z.string().min(1).max(512);
const refsSchema = z.object({ session_id: id.optional(), job_id: id.optional(), batch_id: id.optional() });

/** Ids a tool result refers to. */
export type ResultRefs = z.infer<typeof refsSchema>;

/** The refs of a handler's value: its top-level string `session_id`, `job_id` and `batch_id`. */
export function refsOfValue(value: unknown): ResultRefs {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return {};
  const refs: ResultRefs = {};
  for (const key of REF_KEYS) {
    const v = (value as Record<string, unknown>)[key];
    if (id.safeParse(v).success) refs[key] = v as string;
  }
  return refs;
}

/** `result` with `refs` in its `_meta` (returned as is when there are none). */
export function withRefs<R extends Record<string, unknown>>(result: R, refs: ResultRefs): R {
  if (!Object.keys(refs).length) return result;
  const meta = (result._meta ?? {}) as Record<string, unknown>;
  return { ...result, _meta: { ...meta, [RESULT_REFS_META]: refs } };
}

/** The refs a tool result carries in `_meta` (none when absent or malformed). */
export function resultRefs(result: unknown): ResultRefs {
  const meta = (result as { _meta?: Record<string, unknown> } | null | undefined)?._meta;
  const parsed = refsSchema.safeParse(meta?.[RESULT_REFS_META]);
  return parsed.success ? parsed.data : {};
}

const EXECUTE_TOOL = /^execute_.+_code$/;

/** `execute_{name}_code`: a server's code tool (its calls carry `code` and run in an execution session). */
export function isExecuteTool(name: string): boolean {
  return EXECUTE_TOOL.test(name);
}
