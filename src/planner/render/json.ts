/**
 * `plan --json`: one stable, documented object. `format_version` changes its major part only when a
 * field is removed or changes meaning (as terraform's `show -json`).
 */
import { jsonOut } from '../../common/printable.js';
import { addressOf } from '../../resources/contract.js';
import type { Plan } from '../types.js';
import { prunedHeadline, pruneLeftovers, SENSITIVE } from './format.js';
import { planCounts, unplannedObjects } from './unplanned.js';

// 1.1: `notes` on every change. 1.2: `complete`, `summary.unplanned`, `not_compared` on every change.
// 1.3: `targets`, `excludes`, `targeted`; `prune` on every change (a deletion `--prune` planned keeps
// action `delete`), and `pruned`; `impact` on every change. 1.4: `pruned.not_found`. 1.5:
// `problems[].address` is the full address (namespace, connection) as on changes; it was `Kind/name`;
// `item` on a diff that adds or removes one list item. 1.6: `pruned.out_of_scope`. 1.7:
// `targeted.prune_left_out` and `targeted.prune_kinds_not_listed`. 1.8: `planned` on every change.
// 1.9: `pruned.not_recorded` and `pruned.refused`. 1.10: `pruned.not_declared` (a plan without --prune) and `pruned.inventory_absent`.
// 1.11: a create's `diffs` add each attribute of `after`, a deletion's remove each of `before`;
// every problem carries `file`, `line` and `col`, as a manifest problem did. 1.12: `held_back` on
// every change.
export const PLAN_JSON_FORMAT_VERSION = '1.12';

export interface PlanJson {
  format_version: string;
  converge_version: string;
  changes: Array<{
    address: string;
    kind: string;
    name: string;
    namespace: string | null;
    connection: string | null;
    action: string;
    id: string | null;
    source: string | null;
    reason: string | null;
    /** True for a deletion `--prune` planned: Converge created the object, the manifest dropped it. */
    prune: boolean;
    depends_on: string[];
    /** The kind's remarks on the object, also on noop changes; empty when there are none. */
    notes: string[];
    /** The change's blast radius (users a group reaches, placements per task group); empty when unknown. */
    impact: string[];
    /**
     * Attributes that differ from the manifest but that Converge leaves alone on purpose, said in
     * `notes` (`locked`: someone else's lock; `state`: a push waiting for it); empty when none. A noop
     * with any is not in step with the manifest.
     */
    held_back: string[];
    /** Why the kind could not compare the object (its action is then unknown), or null. */
    not_compared: string | null;
    /**
     * False for an object that could not be planned (a problem, or not compared): its `action` is
     * what it would have been, not a change Converge will make, and `summary` counts it as unplanned.
     */
    planned: boolean;
    diffs: Array<{
      path: string;
      op: string;
      before?: unknown;
      after?: unknown;
      sensitive?: boolean;
      note?: string;
      /** True when the diff adds or removes one item of the list at `path`: `before`/`after` is the item. */
      item?: boolean;
    }>;
    before: Record<string, unknown> | null;
    after: Record<string, unknown> | null;
  }>;
  /** The plan's prune section: its heading and the addresses it deletes, in order. */
  /**
   * `not_found`: the inventory's own objects the prune listing did not find live (stale records).
   * `out_of_scope`: objects Converge created in scopes the manifest no longer manages, objects it
   * created or imported outside every PruneScope the manifest declares for their kind, and objects
   * it created or imported on a Connection the manifest no longer declares (not pruned).
   */
  pruned: {
    headline: string;
    count: number;
    addresses: string[];
    not_found: string[];
    out_of_scope: string[];
    /**
     * Objects in the prune's reach with Converge's ownership marker that this inventory does not
     * record as Converge's (another manifest's, for one): not pruned.
     */
    not_recorded: string[];
    /** Objects the prune would delete whose kind refuses it (a workspace holding an inventory). */
    refused: string[];
    /**
     * Objects the inventory records as Converge's that the manifest no longer declares: without
     * --prune all of them; with it, those of a kind --prune never deletes (an LdapConfig).
     */
    not_declared: string[];
    /**
     * With --prune, why no inventory was read (`workspace acme/inv: it does not exist, or this token
     * may not see it`): the prune then knew of nothing Converge made. Null when one was read.
     */
    inventory_absent: string | null;
  };
  /** False when any object could not be planned: the plan is then not the whole difference. */
  complete: boolean;
  /**
   * Each object counted once: `unplanned` objects (a problem, or not compared) are not counted under
   * their action too; plan refusals (deletion guards) are no object and appear only in `problems`.
   */
  summary: Plan['summary'] & { unplanned: number };
  /** `file`, `line` and `col` are `source` taken apart (null when the problem has no place). */
  problems: Array<{
    address: string;
    message: string;
    source: string | null;
    file: string | null;
    line: number | null;
    col: number | null;
  }>;
  requests: Record<string, number>;
  /** `--target` and `--exclude` patterns (empty when the whole manifest was planned). */
  targets: string[];
  excludes: string[];
  /** A targeted plan: declared objects planned of all declared, and who was left out; else null. */
  targeted: {
    selected: number;
    total: number;
    notes: string[];
    /** Deletions `--prune` would have made that the patterns left out (not planned). */
    prune_left_out: string[];
    /** With `--prune`: kinds no target names, whose deletions were not looked for. */
    prune_kinds_not_listed: string[];
  } | null;
}

type JsonDiff = PlanJson['changes'][number]['diffs'][number];

/** Whether a value is, or holds anywhere inside it, a masked value (a job's `Env` entry, say). */
function holdsMasked(value: unknown): boolean {
  if (value === SENSITIVE) return true;
  if (Array.isArray(value)) return value.some(holdsMasked);
  return typeof value === 'object' && value !== null && Object.values(value).some(holdsMasked);
}

/**
 * A change's attribute diffs. An update or a replace has the kind's own; a create adds, and a
 * deletion removes, every attribute it shows (`after`, `before`), so that a reader of `diffs` sees
 * every action's attributes in one form (`"op": "add"` for each attribute a create sets).
 */
function attributeDiffs(c: Plan['changes'][number]): JsonDiff[] {
  const whole = (side: Record<string, unknown> | null, op: 'add' | 'remove'): JsonDiff[] =>
    Object.entries(side ?? {}).map(([path, value]) => ({
      path,
      op,
      ...(op === 'add' ? { after: value } : { before: value }),
      ...(holdsMasked(value) ? { sensitive: true } : {}),
    }));
  if (c.action === 'create' && c.diffs.length === 0) return whole(c.after, 'add');
  if (c.action === 'delete' && c.diffs.length === 0) return whole(c.before, 'remove');
  return c.diffs.map((d) => ({
    path: d.path,
    op: d.op,
    ...(d.before !== undefined ? { before: d.before } : {}),
    ...(d.after !== undefined ? { after: d.after } : {}),
    ...(d.sensitive ? { sensitive: true } : {}),
    ...(d.note ? { note: d.note } : {}),
    ...(d.item ? { item: true } : {}),
  }));
}

export function planToJson(plan: Plan, version: string): PlanJson {
  const unplannedList = unplannedObjects(plan);
  const unplanned = unplannedList.length;
  const unplannedAddresses = new Set(unplannedList.map((u) => u.address));
  const pruned = plan.changes.filter((c) => c.prune);
  const leftovers = pruneLeftovers(plan);
  return {
    format_version: PLAN_JSON_FORMAT_VERSION,
    converge_version: version,
    changes: plan.changes.map((c) => ({
      address: c.address,
      kind: c.key.kind,
      name: c.key.name,
      namespace: c.key.namespace ?? null,
      connection: c.key.connection ?? null,
      action: c.action,
      id: c.id ?? null,
      source: c.source ?? null,
      reason: c.reason ?? null,
      prune: c.prune === true,
      depends_on: c.dependsOn,
      notes: c.notes ?? [],
      impact: c.impact ?? [],
      held_back: c.differs ?? [],
      not_compared: c.notCompared ?? null,
      planned: !unplannedAddresses.has(c.address),
      diffs: attributeDiffs(c),
      before: c.before,
      after: c.after,
    })),
    pruned: {
      headline: prunedHeadline(pruned.length),
      count: pruned.length,
      addresses: pruned.map((c) => c.address),
      not_found: leftovers.filter((l) => l.why === 'not_found').flatMap((l) => l.addresses),
      out_of_scope: leftovers
        .filter((l) => l.why === 'out_of_scope' || l.why === 'connection_not_declared')
        .flatMap((l) => l.addresses),
      not_recorded: leftovers.filter((l) => l.why === 'not_recorded').flatMap((l) => l.addresses),
      refused: leftovers.filter((l) => l.why === 'refused').flatMap((l) => l.addresses),
      // Of every kind: the ones --prune never deletes are not declared either (said apart in text).
      not_declared: leftovers
        .filter((l) => l.why === 'not_declared' || l.why === 'not_declared_never_pruned')
        .flatMap((l) => l.addresses)
        .sort(),
      inventory_absent: plan.inventoryAbsent ?? null,
    },
    // A refused plan (a deletion guard) is not complete either: it will not be applied as it is.
    complete: plan.problems.length === 0 && unplanned === 0,
    summary: planCounts(plan.changes, unplannedList),
    problems: plan.problems.map((p) => ({
      // The address changes carry, so a problem and its object's change can be matched.
      address: addressOf(p.key),
      message: p.message,
      source: p.position ? `${p.position.file}:${p.position.line}:${p.position.col}` : null,
      // The same keys as a manifest problem's, so one script reads both.
      file: p.position?.file ?? null,
      line: p.position?.line ?? null,
      col: p.position?.col ?? null,
    })),
    requests: plan.requests,
    targets: plan.targeting?.targets ?? [],
    excludes: plan.targeting?.excludes ?? [],
    targeted: plan.targeting
      ? {
          selected: plan.targeting.selected,
          total: plan.targeting.total,
          notes: plan.targeting.notes,
          prune_left_out: plan.targeting.pruneLeftOut ?? [],
          prune_kinds_not_listed: plan.targeting.pruneKindsNotListed ?? [],
        }
      : null,
  };
}

export function renderJson(plan: Plan, version: string): string {
  return `${jsonOut(planToJson(plan, version), null, 2)}\n`;
}

/**
 * `plan --json` when the manifest does not load: the plan's shape with no changes, `complete: false`
 * and each problem with its file, line and column, so a consumer reading stdout learns why.
 */
export function renderInvalidManifestJson(
  problems: ReadonlyArray<{ position: { file: string; line: number; col: number }; message: string }>,
  version: string,
): string {
  return nothingPlannedJson(
    problems.map((p) => ({
      address: null,
      message: p.message,
      source: `${p.position.file}:${p.position.line}:${p.position.col}`,
      file: p.position.file,
      line: p.position.line,
      col: p.position.col,
    })),
    version,
  );
}

/**
 * A plan that stopped before it was made (a service that cannot be reached, a state file that
 * cannot be read): the same shape, `complete: false`, and the reason as its one problem, so a
 * pull-request comment says why instead of staying empty.
 */
export function renderFailedPlanJson(message: string, version: string): string {
  return nothingPlannedJson(
    [{ address: null, message, source: null, file: null, line: null, col: null }],
    version,
  );
}

function nothingPlannedJson(problems: readonly Record<string, unknown>[], version: string): string {
  const doc = {
    format_version: PLAN_JSON_FORMAT_VERSION,
    converge_version: version,
    changes: [],
    pruned: {
      headline: prunedHeadline(0),
      count: 0,
      addresses: [],
      not_found: [],
      out_of_scope: [],
      not_recorded: [],
      refused: [],
      not_declared: [],
      inventory_absent: null,
    },
    complete: false,
    summary: { create: 0, update: 0, replace: 0, delete: 0, noop: 0, unplanned: 0 },
    problems,
    requests: {},
    targets: [],
    excludes: [],
    targeted: null,
  };
  return `${jsonOut(doc, null, 2)}\n`;
}
