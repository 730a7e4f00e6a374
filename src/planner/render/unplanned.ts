/**
 * The objects a plan could not plan: those with a problem, and those their kind could not compare.
 * Every rendering says how many there are and why before anything else, so a plan with such an
 * object never reads as "No changes" or calls it up to date. Each such object is counted once, as
 * not planned, never also under the action it would otherwise have had.
 *
 * A refusal of the whole plan (a deletion guard: `--max-deletes`, a kind pruned empty) is no object:
 * it is told apart as "Plan refused".
 */
import { formatPosition } from '../../common/types.js';
import { addressOf, type PlanProblem } from '../../resources/contract.js';
import type { Action, Change, Plan } from '../types.js';

/** Why an object could not be planned: where in the manifest, when known, and what is wrong. */
export interface UnplannedReason {
  /** `jobs.yaml:5:13` (`formatPosition`). */
  where?: string;
  message: string;
}

export interface Unplanned {
  address: string;
  kind: string;
  reasons: UnplannedReason[];
}

/** `jobs.yaml:5:13: Failed to parse…`: a reason on one line, as the text plan prints it. */
export function reasonText(reason: UnplannedReason): string {
  return reason.where === undefined ? reason.message : `${reason.where}: ${reason.message}`;
}

function whereOf(p: PlanProblem): { where?: string } {
  return p.position ? { where: formatPosition(p.position) } : {};
}

export function unplannedObjects(plan: Plan): Unplanned[] {
  const byAddress = new Map<string, Unplanned>();
  const add = (address: string, kind: string, reason: UnplannedReason) => {
    const entry = byAddress.get(address) ?? { address, kind, reasons: [] };
    const same = (r: UnplannedReason) => r.where === reason.where && r.message === reason.message;
    if (!entry.reasons.some(same)) entry.reasons.push(reason);
    byAddress.set(address, entry);
  };
  for (const p of plan.problems) {
    if (p.scope === 'plan') continue;
    add(addressOf(p.key), p.key.kind, { ...whereOf(p), message: p.message });
  }
  // An object with a problem is not compared because of it: the problem says why.
  for (const c of plan.changes)
    if (c.notCompared && !byAddress.has(c.address))
      add(c.address, c.key.kind, { message: `not compared: ${c.notCompared}` });
  return [...byAddress.values()];
}

/** The refusals of the whole plan (deletion guards), each as its message. */
export function planRefusals(plan: Plan): string[] {
  return plan.problems
    .filter((p) => p.scope === 'plan')
    .map((p) => reasonText({ ...whereOf(p), message: p.message }));
}

/** `Plan refused`: the headline over the plan's refusals in every rendering. */
export const REFUSED_HEADLINE = 'Plan refused';

/**
 * The changes whose action cannot be trusted: an object with a problem, or one never compared. A
 * set, so that the renderers ask about each change in constant time: a plan of 10,000 changes with
 * thousands not planned stays linear.
 */
export function unplannedChanges(plan: Plan, unplanned: readonly Unplanned[]): ReadonlySet<Change> {
  const addresses = new Set(unplanned.map((u) => u.address));
  return new Set(plan.changes.filter((c) => c.notCompared !== undefined || addresses.has(c.address)));
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
