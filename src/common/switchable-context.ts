/**
 * An AsyncLocalStorage that is switched off whenever no run of it is under way. On Node 20 a storage
 * in use switches on promise hooks for the whole process, which cost every promise afterwards: a plan
 * after an apply (a reconcile loop, a library user, the benchmark) ran a third slower in CPU. Each
 * storage of Converge's is made here, so none is left on by mistake.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

export interface SwitchableContext<T> {
  /** Runs `fn` with `value` as the store for everything it starts, sync or async. */
  run<R>(value: T, fn: () => R): R;
  /** The store of the run under way, if any. */
  get(): T | undefined;
  /** Whether a run is under way (the storage, and with it the promise hooks, is switched on). */
  active(): boolean;
}

export function switchableContext<T>(): SwitchableContext<T> {
  const storage = new AsyncLocalStorage<T>();
  /** Runs not yet settled; at 0 the storage is disabled. */
  let running = 0;
  const settled = () => {
    running -= 1;
    if (running === 0) storage.disable();
  };
  return {
    run<R>(value: T, fn: () => R): R {
      running += 1;
      let result: R;
      try {
        result = storage.run(value, fn);
      } catch (error) {
        settled();
        throw error;
      }
      if (result instanceof Promise) return result.finally(settled) as R;
      settled();
      return result;
    },
    get: () => storage.getStore(),
    active: () => running > 0,
  };
}
