/**
 * The objects a plan could not plan: those with a problem, and those their kind could not compare.
 * Every rendering says how many there are and why before anything else, so a plan with such an
 * object never reads as "No changes" or calls it up to date. Each such object is counted once, as
 * not planned, never also under the action it would otherwise have had.
 *
 * A refusal of the whole plan (a deletion guard: `--max-deletes`, a kind pruned empty) is no object:
 * it is told apart as "Plan refused".
 */
import { addressOf } from '../../resources/contract.js';
import type { Action, Change, Plan } from '../types.js';

export interface Unplanned {
  address: string;
  kind: string;
  /** Each reason with its manifest position when there is one (`jobs.yaml:5:13: Failed to parse…`). */
  reasons: string[];
}

export function unplannedObjects(plan: Plan): Unplanned[] {
  const byAddress = new Map<string, Unplanned>();
  const add = (address: string, kind: string, reason: string) => {
    const entry = byAddress.get(address) ?? { address, kind, reasons: [] };
    if (!entry.reasons.includes(reason)) entry.reasons.push(reason);
    byAddress.set(address, entry);
  };
  for (const p of plan.problems) {
    if (p.scope === 'plan') continue;
    const where = p.position ? `${p.position.file}:${p.position.line}:${p.position.col}: ` : '';
    add(addressOf(p.key), p.key.kind, `${where}${p.message}`);
  }
  // An object with a problem is not compared because of it: the problem says why.
  for (const c of plan.changes)
    if (c.notCompared && !byAddress.has(c.address))
      add(c.address, c.key.kind, `not compared: ${c.notCompared}`);
  return [...byAddress.values()];
}

/** The refusals of the whole plan (deletion guards), each as its message. */
export function planRefusals(plan: Plan): string[] {
  return plan.problems
    .filter((p) => p.scope === 'plan')
    .map(
      (p) => `${p.position ? `${p.position.file}:${p.position.line}:${p.position.col}: ` : ''}${p.message}`,
    );
}

/** `Plan refused`: the headline over the plan's refusals in every rendering. */
export const REFUSED_HEADLINE = 'Plan refused';

/** Whether a change's action cannot be trusted: an object with a problem, or one never compared. */
export function isUnplanned(change: Change, unplanned: readonly Unplanned[]): boolean {
  return change.notCompared !== undefined || unplanned.some((u) => u.address === change.address);
}

export type PlanCounts = Record<Action, number> & { unplanned: number };

/**
 * How many objects each action touches, and how many could not be planned: every object counted
 * exactly once, so the counts add up to the objects of the plan.
 */
export function planCounts(changes: readonly Change[], unplanned: readonly Unplanned[]): PlanCounts {
  const counts: PlanCounts = { create: 0, update: 0, replace: 0, delete: 0, noop: 0, unplanned: 0 };
  const addresses = new Set(unplanned.map((u) => u.address));
  for (const c of changes) if (!addresses.has(c.address) && !c.notCompared) counts[c.action] += 1;
  counts.unplanned = unplanned.length;
  return counts;
}

/** `1 object could not be planned`, `3 objects could not be planned`. */
export function unplannedHeadline(count: number): string {
  return `Plan incomplete: ${count} object${count === 1 ? '' : 's'} could not be planned`;
}
