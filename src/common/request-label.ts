/**
 * The object a request is made for (its address), carried by the async context rather than through
 * every client call: the applier runs each change under its address, and whoever reports a retry
 * (the CLI's retry lines) can say which object it belongs to. Undefined outside such a change (a
 * list shared by many objects).
 *
 * The storage is switched off whenever no labelled run is under way (see switchable-context.ts).
 */
import { switchableContext } from './switchable-context.js';

const label = switchableContext<string>();

/** Runs `fn` with requests made inside it labelled `address`. */
export function withRequestLabel<T>(address: string, fn: () => T): T {
  return label.run(address, fn);
}

/** The label of the request being made, when it is made for one object. */
export function currentRequestLabel(): string | undefined {
  return label.get();
}

/** Whether a labelled run is under way (the async context is switched on); for tests. */
export function requestLabelsActive(): boolean {
  return label.active();
}
