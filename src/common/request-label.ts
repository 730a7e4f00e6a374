/**
 * The object a request is made for (its address), carried by the async context rather than through
 * every client call: the applier runs each change under its address, and whoever reports a retry
 * (the CLI's retry lines) can say which object it belongs to. Undefined outside such a change (a
 * list shared by many objects).
 *
 * On Node 20 an AsyncLocalStorage in use switches on promise hooks for the whole process, which cost
 * every promise afterwards (a plan after an apply, in a reconcile loop or a library user, ran a
 * third slower in CPU). So the storage is switched off again whenever no labelled run is under way.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

const label = new AsyncLocalStorage<string>();
/** Labelled runs not yet settled; at 0 the storage (and with it the promise hooks) is disabled. */
let running = 0;

function settled(): void {
  running -= 1;
  if (running === 0) label.disable();
}

/** Runs `fn` with requests made inside it labelled `address`. */
export function withRequestLabel<T>(address: string, fn: () => T): T {
  running += 1;
  let result: T;
  try {
    result = label.run(address, fn);
  } catch (error) {
    settled();
    throw error;
  }
  if (result instanceof Promise) return result.finally(settled) as T;
  settled();
  return result;
}

/** The label of the request being made, when it is made for one object. */
export function currentRequestLabel(): string | undefined {
  return label.getStore();
}

/** Whether a labelled run is under way (the async context is switched on); for tests. */
export function requestLabelsActive(): boolean {
  return running > 0;
}
