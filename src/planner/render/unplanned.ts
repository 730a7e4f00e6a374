/**
 * The objects a plan could not plan: those with a problem, and those their kind could not compare.
 * Every rendering says how many there are and why before anything else, so a plan with such an
 * object never reads as "No changes" or calls it up to date.
 */
import { addressOf } from '../../resources/contract.js';
import type { Change, Plan } from '../types.js';

export interface Unplanned {
  address: string;
  /** Each reason with its manifest position when there is one (`jobs.yaml:5:13: Failed to parse…`). */
  reasons: string[];
}

export function unplannedObjects(plan: Plan): Unplanned[] {
  const byAddress = new Map<string, string[]>();
  const add = (address: string, reason: string) => {
    const reasons = byAddress.get(address) ?? [];
    if (!reasons.includes(reason)) reasons.push(reason);
    byAddress.set(address, reasons);
  };
  for (const p of plan.problems) {
    const where = p.position ? `${p.position.file}:${p.position.line}:${p.position.col}: ` : '';
    add(addressOf(p.key), `${where}${p.message}`);
  }
  // An object with a problem is not compared because of it: the problem says why.
  for (const c of plan.changes)
    if (c.notCompared && !byAddress.has(c.address)) add(c.address, `not compared: ${c.notCompared}`);
  return [...byAddress].map(([address, reasons]) => ({ address, reasons }));
}

/** Whether a change's action cannot be trusted: an unchanged object that was never really compared. */
export function isUnplanned(change: Change, unplanned: readonly Unplanned[]): boolean {
  return change.notCompared !== undefined || unplanned.some((u) => u.address === change.address);
}

/** `1 object could not be planned`, `3 objects could not be planned`. */
export function unplannedHeadline(count: number): string {
  return `Plan incomplete: ${count} object${count === 1 ? '' : 's'} could not be planned`;
}
