/**
 * The order changes are handed to the run's slots: those that others wait for first. Slots are given
 * out first come, first served, so in plan order a directory group waited behind every role and
 * workspace listed before it, and its users, released only when it finished, ran last of all with
 * most slots idle (the tail of an apply). Ordered by the longest chain of dependants below each
 * change (the critical path), a change others need starts first, and what it releases overlaps the
 * independent changes instead of following them.
 */
import type { Change } from '../planner/types.js';

/**
 * `changes` (in dependency order: each after the changes it depends on), stably ordered by the
 * length of the longest chain of changes that wait for it, longest first. A change always has a
 * longer chain than anything waiting for it, so the result is still in dependency order.
 */
export function criticalPathFirst<C extends Pick<Change, 'address' | 'dependsOn'>>(
  changes: readonly C[],
): C[] {
  const waitingFor = new Map<string, string[]>();
  for (const change of changes)
    for (const dependency of change.dependsOn) {
      const dependants = waitingFor.get(dependency);
      if (dependants) dependants.push(change.address);
      else waitingFor.set(dependency, [change.address]);
    }
  /** Changes in the longest chain that starts at a change and runs through what waits for it. */
  const chain = new Map<string, number>();
  for (let i = changes.length - 1; i >= 0; i--) {
    const { address } = changes[i]!;
    let longest = 0;
    for (const dependant of waitingFor.get(address) ?? [])
      longest = Math.max(longest, chain.get(dependant) ?? 0);
    chain.set(address, longest + 1);
  }
  return changes
    .map((change, index) => ({ change, index, chain: chain.get(change.address)! }))
    .sort((a, b) => b.chain - a.chain || a.index - b.index)
    .map(({ change }) => change);
}
