/** Injection token of the resolved {@link ExecutorSettings}. */
export const EXECUTOR_SETTINGS = Symbol('EXECUTOR_SETTINGS');
