/**
 * Guards against plans that delete more than anyone meant to: a kind Converge manages that the
 * manifest now declares empty (a file left out of `-f`, a folder renamed), and more deletions than
 * the operator allows (`--max-deletes`). Each is a plan problem, so the plan is shown and nothing
 * is applied.
 */
import { LIBRARY_SETTING_NAMES, type SettingNames } from '../common/setting-names.js';
import { type Desired, inPruneScope, type PlanProblem, type PruneScope } from '../resources/contract.js';
import type { Plan } from '../planner/types.js';

export interface DeletionLimits {
  /** `--allow-empty`: prune a kind even when the manifest declares no object of it. */
  allowEmpty?: boolean;
  /**
   * `--max-deletes N`: refuse a plan that deletes more than N objects. Every deletion counts: prune,
   * `ensure: absent`, and the delete half of a replace (the object is gone for a while either way).
   */
  maxDeletes?: number;
}

/** How many of the deletions a `--max-deletes` refusal names. */
const NAMED_DELETIONS = 5;

export function deletionProblems(
  plan: Plan,
  desired: readonly Desired[],
  limits: DeletionLimits,
  names: SettingNames = LIBRARY_SETTING_NAMES,
  scopes: readonly PruneScope[] = [],
): PlanProblem[] {
  const problems: PlanProblem[] = [];
  if (!limits.allowEmpty) {
    const declaredKinds = new Set(desired.filter((d) => d.ensure !== 'absent').map((d) => d.key.kind));
    // A PruneScope the manifest declares with `allowEmpty: true` says in the reviewed manifest what
    // the flag says on one command line: its deletions are meant (the hint for objects left out of
    // scope suggests exactly such a scope). Scopes Converge implies itself do not count.
    const allowedEmpty = scopes.filter((s) => s.name !== undefined && s.allowEmpty);
    const pruned = new Map<string, number>();
    for (const c of plan.changes)
      if (
        c.prune &&
        !declaredKinds.has(c.key.kind) &&
        !allowedEmpty.some((scope) => inPruneScope(c.key, scope))
      )
        pruned.set(c.key.kind, (pruned.get(c.key.kind) ?? 0) + 1);
    for (const [kind, count] of pruned) {
      problems.push({
        key: { kind: 'Prune', name: kind },
        scope: 'plan',
        message: `the manifest declares no ${kind} any more, so ${names.prune} would delete ${count === 1 ? 'the 1' : `all ${count}`} that Converge manages (created or adopted); refusing (set ${names.allowEmpty} if that is meant)`,
      });
    }
  }
  if (limits.maxDeletes !== undefined) {
    const deleted = plan.changes.filter((c) => c.action === 'delete' || c.action === 'replace');
    const deletes = deleted.length;
    if (deletes > limits.maxDeletes) {
      // Named, a few of them: whoever reads the refusal in a log (a reconcile cycle's error line)
      // sees what would have gone without running a plan first.
      const named = deleted.slice(0, NAMED_DELETIONS).map((c) => c.address);
      const more = deletes > NAMED_DELETIONS ? `, and ${deletes - NAMED_DELETIONS} more` : '';
      problems.push({
        key: { kind: 'Plan', name: 'max-deletes' },
        scope: 'plan',
        message: `the plan deletes ${deletes} object${deletes === 1 ? '' : 's'} (deletions and replacements: ${named.join(', ')}${more}), more than ${names.maxDeletes} ${limits.maxDeletes} allows; refusing (review the plan, then raise ${names.maxDeletes})`,
      });
    }
  }
  return problems;
}
