/**
 * Orders changes so that every change comes after what it depends on. Creates and updates follow
 * dependencies forwards; deletions run last and backwards (a dependant goes before what it needs),
 * as kapp and Argo CD do.
 */
import type { Change } from './types.js';

/** Kahn's algorithm, stable on the input order; a cycle is an error naming its members. */
export function topologicalOrder(changes: Change[]): Change[] {
  const byAddress = new Map(changes.map((c) => [c.address, c]));
  const pending = new Map(
    changes.map((c) => [c.address, new Set(c.dependsOn.filter((d) => byAddress.has(d)))]),
  );
  const ordered: Change[] = [];
  while (pending.size > 0) {
    const ready = changes.filter((c) => pending.get(c.address)?.size === 0);
    if (ready.length === 0) {
      throw new Error(`dependency cycle between ${[...pending.keys()].join(', ')}`);
    }
    for (const c of ready) {
      ordered.push(c);
      pending.delete(c.address);
      for (const deps of pending.values()) deps.delete(c.address);
    }
  }
  return ordered;
}
