/** The executor as an embedding composes it: config, settings, extension points and the app builder. */
export {
  executorConfigSchema,
  loadExecutorSettings,
  type ExecutorConfig,
  type ExecutorSettings,
} from './executor.config';
export type { ExecutorExtensions } from './executor.extensions';
export { createExecutorApp } from './executor.bootstrap';
