/**
 * Orders changes so that every change comes after what it depends on. Creates and updates follow
 * dependencies forwards; deletions run last and backwards (a dependant goes before what it needs),
 * as kapp and Argo CD do.
 */
import type { Change } from './types.js';

/**
 * Kahn's algorithm in waves, linear in changes and edges (plus sorting each wave): every wave is the
 * changes whose dependencies are all placed, in input order, so the result is stable. A cycle is an
 * error naming its members.
 */
export function topologicalOrder(changes: readonly Change[]): Change[] {
  const position = new Map(changes.map((c, i) => [c.address, i]));
  const waiting = new Map<Change, number>();
  const dependants = new Map<string, Change[]>();
  for (const c of changes) {
    // Most changes depend on nothing: no set and no filtered copy for them.
    if (c.dependsOn.length === 0) {
      waiting.set(c, 0);
      continue;
    }
    const deps = new Set(c.dependsOn.filter((d) => position.has(d) && d !== c.address));
    waiting.set(c, deps.size);
    for (const d of deps) {
      const list = dependants.get(d);
      if (list) list.push(c);
      else dependants.set(d, [c]);
    }
  }
  const ordered: Change[] = [];
  let wave = changes.filter((c) => waiting.get(c) === 0);
  while (wave.length > 0) {
    const next: Change[] = [];
    for (const c of wave) {
      ordered.push(c);
      for (const d of dependants.get(c.address) ?? []) {
        const left = waiting.get(d)! - 1;
        waiting.set(d, left);
        if (left === 0) next.push(d);
      }
    }
    wave = next.sort((a, b) => position.get(a.address)! - position.get(b.address)!);
  }
  if (ordered.length < changes.length) {
    const stuck = changes.filter((c) => waiting.get(c)! > 0).map((c) => c.address);
    throw new Error(`dependency cycle between ${stuck.join(', ')}`);
  }
  return ordered;
}
