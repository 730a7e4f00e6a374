/**
 * Guards against plans that delete more than anyone meant to: a kind Converge manages that the
 * manifest now declares none of on a connection or in a namespace (a file left out of `-f`, a folder
 * renamed), and more deletions than
 * the operator allows (`--max-deletes`). Each is a plan problem, so the plan is shown and nothing
 * is applied.
 */
import { LIBRARY_SETTING_NAMES, type SettingNames } from '../common/setting-names.js';
import {
  type Desired,
  inPruneScope,
  type PlanProblem,
  type PruneScope,
  type ResourceKey,
} from '../resources/contract.js';
import { PRUNE_SCOPE_LIMITS } from '../planner/prune-scope-limits.js';
import type { Change, Plan } from '../planner/types.js';

export interface DeletionLimits {
  /**
   * `--allow-empty`: prune a kind even where the manifest declares no object of it (on a connection,
   * in a namespace).
   */
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
  if (!limits.allowEmpty) problems.push(...emptiedScopeProblems(plan, desired, names, scopes));
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

/**
 * Where a prune deletes from: a kind on one connection, in one namespace (a registry namespace, an
 * LDAP mount, an organization), as the prune lists it. Counted per kind alone, one role declared on
 * the default registry let a manifest that left out the file of Connection `eu`'s roles delete
 * every one of them, the accident the guard is for.
 */
function pruneScopeId(key: ResourceKey): string {
  return JSON.stringify([key.kind, key.connection ?? null, key.namespace ?? null]);
}

/**
 * The emptied-scope refusals: prune deletions where the manifest declares no object of their kind
 * on their connection and in their namespace any more, one problem per such scope.
 */
function emptiedScopeProblems(
  plan: Plan,
  desired: readonly Desired[],
  names: SettingNames,
  scopes: readonly PruneScope[],
): PlanProblem[] {
  const declared = new Set(desired.filter((d) => d.ensure !== 'absent').map((d) => pruneScopeId(d.key)));
  // A PruneScope the manifest declares with `allowEmpty: true` says in the reviewed manifest what
  // the flag says on one command line: its deletions are meant (the hint for objects left out of
  // scope suggests exactly such a scope). Scopes Converge implies itself do not count.
  const allowedEmpty = scopes.filter((s) => s.name !== undefined && s.allowEmpty);
  const emptied = new Map<string, Change[]>();
  for (const c of plan.changes) {
    if (!c.prune) continue;
    const id = pruneScopeId(c.key);
    if (declared.has(id) || allowedEmpty.some((scope) => inPruneScope(c.key, scope))) continue;
    const changes = emptied.get(id);
    if (changes) changes.push(c);
    else emptied.set(id, [c]);
  }
  // The default connection is named only where the kind also lives on a named one: otherwise
  // "on the default connection" is noise in every manifest without Connections.
  const onNamed = new Set(
    [...desired, ...plan.changes].filter((x) => x.key.connection !== undefined).map((x) => x.key.kind),
  );
  return [...emptied.values()].map((changes) => {
    const { kind, namespace, connection } = changes[0]!.key;
    const label = changes[0]!.namespaceLabel ?? 'namespace';
    const where = [
      namespace !== undefined ? `in ${label} ${namespace}` : '',
      connection !== undefined
        ? `on connection ${connection}`
        : onNamed.has(kind)
          ? 'on the default connection'
          : '',
    ]
      .filter(Boolean)
      .join(' ');
    const fields = [
      `kind: ${kind}`,
      ...(namespace !== undefined ? [`namespace: ${namespace}`] : []),
      ...(connection !== undefined ? [`connection: ${connection}`] : []),
      'allowEmpty: true',
    ].join(', ');
    const n = changes.length;
    return {
      // One refusal per emptied scope, each at its own address (`Prune@eu/AclRole/team1`): keyed by
      // kind alone, two emptied namespaces gave two problems at the one address `Prune/AclRole`.
      key: {
        kind: 'Prune',
        name: namespace !== undefined ? `${kind}/${namespace}` : kind,
        ...(connection !== undefined ? { connection } : {}),
      },
      scope: 'plan',
      message: `the manifest declares no ${kind}${where ? ` ${where}` : ''} any more, so ${names.prune} would delete ${n === 1 ? 'the 1' : `all ${n}`} that Converge manages there (created or adopted); refusing (if that is meant, set ${names.allowEmpty}, or declare a PruneScope with ${fields}; ${PRUNE_SCOPE_LIMITS})`,
    };
  });
}
