/**
 * Resolves at the first of: `wake` called, `ms` elapsed, `signal` aborted. Returns the wake function for the caller
 * to hand to an event handler before it checks the condition it waits for.
 */
export function wakeable(): { wake: () => void; sleep: (ms: number, signal?: AbortSignal) => Promise<void> } {
  let woken = false;
  let resolveFn: (() => void) | undefined;
  return {
    wake: () => {
      woken = true;
      resolveFn?.();
    },
    sleep: (ms, signal) =>
      new Promise<void>((resolve) => {
        if (woken || signal?.aborted) {
          woken = false;
          return resolve();
        }
        const timer = setTimeout(done, Math.max(0, ms));
        const onAbort = () => done();
        signal?.addEventListener('abort', onAbort, { once: true });
        function done() {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          resolveFn = undefined;
          woken = false;
          resolve();
        }
        resolveFn = done;
      }),
  };
}
