import { z } from 'zod';
import { nonNegative, positiveInt } from '@stoa/config';
import { kernelTimingSchema } from '@stoa/kernel';

/** Default for `execution.max_code_bytes`: 1 MiB (tens of thousands of lines). */
export const DEFAULT_MAX_CODE_BYTES = 1024 * 1024;

/** `execution:` in a server YAML. */
export const executionConfigSchema = z
  .strictObject({
    /** sync: inline results; async_only: every execute returns a job handle; adaptive: inline unless it runs past promotion_threshold_s. */
    mode: z.enum(['sync', 'async_only', 'adaptive']).default('sync').meta({ env: 'STOA_EXECUTION_MODE' }),
    promotion_threshold_s: nonNegative.default(60),
    /** Batch items run at once on this replica; unset → PARALLEL_EXECUTE_MAX_CONCURRENCY or the CPU count; 0 = unlimited. */
    parallel_max_concurrency: z.coerce
      .number()
      .int()
      .min(0)
      .optional()
      .meta({ env: 'PARALLEL_EXECUTE_MAX_CONCURRENCY' }),
    /** Most inputs one parallel_execute call accepts (each is a job row and a kernel run); more are refused before anything is written. */
    parallel_max_inputs: positiveInt.default(1000).meta({ env: 'PARALLEL_EXECUTE_MAX_INPUTS' }),
    default_timeout: positiveInt.default(300).meta({ env: 'STOA_DEFAULT_TIMEOUT' }),
    max_timeout: positiveInt.default(600).meta({ env: 'STOA_MAX_TIMEOUT' }),
    /** Characters per stream before truncation; 0 disables; unset → CODE_OUTPUT_TRUNCATION_THRESHOLD or 50000. */
    output_truncation_threshold: nonNegative.int().nullable().default(null),
    /** Largest cell (UTF-8 bytes) sent to a kernel; bigger ones are refused before they reach it (parsing them could exhaust its memory). */
    max_code_bytes: positiveInt.default(DEFAULT_MAX_CODE_BYTES),
  })
  .extend(kernelTimingSchema.shape)
  .prefault({});
export type ExecutionConfig = z.output<typeof executionConfigSchema>;

/** What the execution service needs from config. */
export interface ExecutionSettings {
  serverName: string;
  mode: 'sync' | 'async_only' | 'adaptive';
  promotionThresholdS: number;
  defaultTimeoutS: number;
  maxTimeoutS: number;
  truncationThreshold: number;
  interruptGraceMs: number;
  /** Largest cell in UTF-8 bytes (`execution.max_code_bytes`; default 1 MiB). */
  maxCodeBytes?: number;
}
export const EXECUTION_SETTINGS = Symbol('EXECUTION_SETTINGS');

export const DEFAULT_TRUNCATION_THRESHOLD = 50_000;

/**
 * The reference's threshold rules: config if set, else env `CODE_OUTPUT_TRUNCATION_THRESHOLD`
 * (whitespace and underscores ignored, `50_000` accepted); invalid or negative env → 50000 with a warning.
 */
export function resolveTruncationThreshold(
  configured: number | null,
  envValue: string | undefined,
  warn: (msg: string) => void,
): number {
  if (configured !== null) return configured;
  if (envValue === undefined || envValue.trim() === '') return DEFAULT_TRUNCATION_THRESHOLD;
  const cleaned = envValue.trim().replace(/_/g, '');
  const n = /^\d+$/.test(cleaned) ? Number(cleaned) : NaN;
  if (!Number.isSafeInteger(n)) {
    warn(
      `CODE_OUTPUT_TRUNCATION_THRESHOLD='${envValue}' is not a non-negative integer; using ${DEFAULT_TRUNCATION_THRESHOLD}.`,
    );
    return DEFAULT_TRUNCATION_THRESHOLD;
  }
  return n;
}

/** Hard cap on characters held per stream when truncation is disabled (server memory stays bounded). */
export const MAX_CAPTURE_CHARS = 8 * 1024 * 1024;

/** Guards the relation between the two timeouts. */
export function checkTimeouts(c: ExecutionConfig): string | undefined {
  return c.default_timeout > c.max_timeout
    ? `execution.default_timeout (${c.default_timeout}) exceeds execution.max_timeout (${c.max_timeout})`
    : undefined;
}
