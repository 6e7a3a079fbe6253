import { AsyncLocalStorage } from 'node:async_hooks';
import type { Principal } from './principal';

/** What every request carries through async calls. */
export interface RequestContext {
  readonly requestId: string;
  readonly principal: Principal;
}

const storage = new AsyncLocalStorage<RequestContext>();

/** Runs `fn` with `ctx` as the current request context. */
export function runWithContext<T>(ctx: RequestContext, fn: () => T): T {
  return storage.run(ctx, fn);
}

/** The current request context, if any. */
export function currentContext(): RequestContext | undefined {
  return storage.getStore();
}
