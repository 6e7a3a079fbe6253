/** `execution:` config schema, truncation threshold rules, env overrides. */
export {
  checkTimeouts,
  executionConfigSchema,
  resolveTruncationThreshold,
  type ExecutionConfig,
  type ExecutionSettings,
} from './execution.config';
/** The execute pipeline. */
export { ExecutionService } from './execution.service';
/** Nest module. */
export { ExecutionModule } from './execution.module';
/** Output truncation (reference §1.2.1). */
export { truncateStderr, truncateStdout } from './truncation';
/** Wire types of the execute tool. */
export type { ExecuteInput, ExecuteOrigin, ExecuteResult, FunctionPolicy, JobHandle } from './execution.types';
/** Parallel batch items: validation and isolated runs. */
export { BatchRunner, batchItemCodes, type BatchItem, type BatchItemOutcome } from './batch-runner.service';
/** The hooks extension point: validate / preprocess / postprocess around every execute call. */
export { EXECUTION_HOOKS, type ExecutionHooks, type HookContext } from './execution-hooks';
