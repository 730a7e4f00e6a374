/**
 * The object a request is made for (its address), carried by the async context rather than through
 * every client call: the applier runs each change under its address, and whoever reports a retry
 * (the CLI's retry lines) can say which object it belongs to. Undefined outside such a change (a
 * list shared by many objects).
 */
import { AsyncLocalStorage } from 'node:async_hooks';

const label = new AsyncLocalStorage<string>();

/** Runs `fn` with requests made inside it labelled `address`. */
export function withRequestLabel<T>(address: string, fn: () => T): T {
  return label.run(address, fn);
}

/** The label of the request being made, when it is made for one object. */
export function currentRequestLabel(): string | undefined {
  return label.getStore();
}
