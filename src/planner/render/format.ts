/**
 * How attribute values read in plans: HCL-like (`"text"`, `true`, `[...]`, `{ Key = value }`), on one
 * line when short, so a diff line stays a line.
 */
import { PRUNE_SCOPE_LIMITS } from '../prune-scope-limits.js';
import { printable } from '../../common/printable.js';
import type { Action, Plan, Targeting } from '../types.js';

export const SENSITIVE = '(sensitive value)';
export const COMPUTED = '(known after apply)';
export const SENSITIVE_CHANGED = '(sensitive value changed)';

export function formatValue(value: unknown): string {
  if (value === SENSITIVE || value === COMPUTED) return value;
  if (value === undefined) return 'null';
  // JSON escapes C0 controls but lets C1 controls (CSI), bidi overrides and line separators through.
  if (typeof value === 'string') return printable(JSON.stringify(value));
  if (Array.isArray(value)) return `[${value.map(formatValue).join(', ')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).map(([k, v]) => `${formatKey(k)} = ${formatValue(v)}`);
    return entries.length === 0 ? '{}' : `{ ${entries.join(', ')} }`;
  }
  return String(value);
}

/**
 * A map key as written: bare when it is a plain name, quoted otherwise (as HCL writes such keys), so
 * no key can break the line and a dotted key (`"spring.datasource.url"`) never reads as nesting.
 */
export function formatKey(key: string): string {
  return /^[A-Za-z_][\w-]*$/.test(key) ? key : printable(JSON.stringify(key));
}

export const SYMBOLS: Record<Action, string> = {
  create: '+',
  update: '~',
  replace: '-/+',
  delete: '-',
  noop: ' ',
};

export const VERBS: Record<Action, string> = {
  create: 'will be created',
  update: 'will be updated in place',
  replace: 'must be replaced',
  delete: 'will be deleted',
  noop: 'is up to date',
};

/** An unchanged object that still differs in what its kind holds back: not "up to date". */
export const HELD_BACK_VERB = 'is left as it is, though it differs from the manifest (see below)';

/**
 * `Plan: 1 to add, …, 2 unchanged.`; objects that could not be planned are counted apart, once, never
 * as unchanged nor under the action they would have had (`planCounts` in unplanned.ts).
 */
export function summaryLine(s: Record<Action, number> & { unplanned: number }): string {
  const notPlanned = s.unplanned > 0 ? `, ${s.unplanned} not planned` : '';
  return `Plan: ${s.create} to add, ${s.update} to change, ${s.replace} to replace, ${s.delete} to destroy, ${s.noop} unchanged${notPlanned}.`;
}

/**
 * The headline of a plan of part of the manifest (`--target`, `--exclude`): a reviewer must not take
 * "No changes" for the whole manifest's.
 */
export function targetingLines(t: Targeting): string[] {
  const asked = [...t.targets.map((p) => `--target ${p}`), ...t.excludes.map((p) => `--exclude ${p}`)];
  const headline =
    t.selected === t.total
      ? `Targeted plan: all ${t.total} declared object${t.total === 1 ? '' : 's'} (${asked.join(', ')}).`
      : `Targeted plan: ${t.selected} of ${t.total} declared objects; the rest not compared (${asked.join(', ')}).`;
  const notListed = t.pruneKindsNotListed ?? [];
  return [
    headline,
    ...t.notes,
    ...pruneLeftOutLines(t.pruneLeftOut ?? []),
    ...(notListed.length > 0
      ? [
          `Not looked at: what --prune would delete of ${notListed.join(', ')} (no --target names ${notListed.length === 1 ? 'this kind' : 'these kinds'}).`,
        ]
      : []),
  ];
}

/** How many prune deletions a targeted plan's headline names before it only counts the rest. */
const PRUNE_LEFT_OUT_NAMED = 10;

function pruneLeftOutLines(addresses: readonly string[]): string[] {
  const n = addresses.length;
  if (n === 0) return [];
  // Addresses of live objects: a service's name may carry escape codes, made inert here.
  const named = addresses.slice(0, PRUNE_LEFT_OUT_NAMED).map(printable).join(', ');
  const more = n > PRUNE_LEFT_OUT_NAMED ? ` and ${n - PRUNE_LEFT_OUT_NAMED} more` : '';
  return [`Left out: ${n} deletion${n === 1 ? '' : 's'} --prune would make, not planned (${named}${more}).`];
}

/**
 * What a prune listing did not find of the inventory's own objects: a headline, then the command
 * that drops a stale record. The same in every rendering.
 */
function missingOwnedLines(addresses: readonly string[]): string[] {
  const n = addresses.length;
  return [
    `Not found: ${n} object${n === 1 ? '' : 's'} the inventory records as Converge's no longer exist${n === 1 ? 's' : ''} (deleted outside Converge, or a job stopped?); nothing to delete. An object of the same name with another id is someone else's and is left alone.`,
    'Drop a stale record with `converge inventory forget ADDRESS --yes`.',
  ];
}

/**
 * Why `--prune` left an object: the plan's "Not found" and "Not pruned" lists. Of the inventory's own
 * objects, but for `not_recorded`: marked as a Converge's, and not recorded by this one.
 */
export type PruneLeftoverReason =
  | 'not_found'
  | 'out_of_scope'
  | 'connection_not_declared'
  | 'not_recorded'
  | 'refused'
  /** Without `--prune`: the inventory's objects the manifest no longer declares, which stay. */
  | 'not_declared'
  /** The same, of a kind `--prune` never deletes. */
  | 'not_declared_never_pruned';

export interface PruneLeftover {
  why: PruneLeftoverReason;
  addresses: readonly string[];
  /** The headline and the hint, the same in every rendering. */
  lines: [headline: string, hint: string];
}

/**
 * What a plan says when its patterns (`--target`, `--exclude`) selected no object to change. When
 * they cover only what the prune leaves, those are listed after it: "left every object out" then
 * read as false right above the objects they named.
 */
export function nothingSelectedLine(plan: Plan, leftoversListed: 'above' | 'below'): string {
  if (pruneLeftovers(plan).length > 0)
    return `Nothing was planned: the patterns select no object to change (see above), only what --prune leaves (listed ${leftoversListed}).`;
  // With both kinds of pattern, say which undid which: "(see above)" pointed at a line that only
  // repeated the patterns.
  const t = plan.targeting;
  if (t && t.targets.length > 0 && t.excludes.length > 0)
    return `Nothing was planned: every object --target matched, --exclude left out (the patterns are above).`;
  return 'Nothing was planned: the patterns left every object out (see above).';
}

/**
 * Every list of the inventory's objects the prune left, in the order the plan says them, each with
 * its words: the one description every rendering and the reconcile log read, so a list added to the
 * plan is said everywhere or nowhere.
 */
export function pruneLeftovers(plan: Plan): PruneLeftover[] {
  const unreachable = plan.ownedOnUndeclaredConnection ?? [];
  const lists: [PruneLeftoverReason, readonly string[], () => string[]][] = [
    ['not_found', plan.missingOwned ?? [], () => missingOwnedLines(plan.missingOwned!)],
    ['out_of_scope', plan.ownedOutOfScope ?? [], () => ownedOutOfScopeLines(plan.ownedOutOfScope!)],
    [
      'out_of_scope',
      plan.ownedOutsidePruneScopes ?? [],
      () => ownedOutsidePruneScopesLines(plan.ownedOutsidePruneScopes!),
    ],
    [
      'connection_not_declared',
      unreachable.map((u) => u.address),
      () => undeclaredConnectionLines(unreachable),
    ],
    ['not_recorded', plan.markedNotRecorded ?? [], () => markedNotRecordedLines(plan.markedNotRecorded!)],
    ['refused', plan.pruneRefused ?? [], () => pruneRefusedLines(plan.pruneRefused!)],
    ['not_declared', plan.ownedNotDeclared ?? [], () => ownedNotDeclaredLines(plan.ownedNotDeclared!)],
    [
      'not_declared_never_pruned',
      plan.ownedNotDeclaredNeverPruned ?? [],
      () => neverPrunedNotDeclaredLines(plan.ownedNotDeclaredNeverPruned!),
    ],
  ];
  return lists
    .filter(([, addresses]) => addresses.length > 0)
    .map(([why, addresses, linesFor]) => {
      const [headline, hint] = linesFor();
      return { why, addresses, lines: [headline!, hint!] };
    });
}

/**
 * Without `--prune`: the inventory's own objects whose documents are gone from the manifest. A plan
 * said "No changes" of a pull request that removed them, which a reviewer read as nothing left
 * behind, or as a deletion to come.
 */
function ownedNotDeclaredLines(addresses: readonly string[]): string[] {
  const n = addresses.length;
  const one = n === 1;
  return [
    `Not declared: ${n} object${one ? '' : 's'} the inventory records as Converge's ${one ? 'is' : 'are'} no longer in the manifest; without --prune ${one ? 'it is' : 'they are'} left alone (not read: one deleted outside Converge meanwhile is listed too, and a plan with --prune says so).`,
    `Plan with --prune to delete ${one ? 'it' : 'them'} (each deletion is listed), declare ${one ? 'it' : 'them'} with \`ensure: absent\`, or drop a record with \`converge inventory forget ADDRESS --yes\` to leave the object unmanaged.`,
  ];
}

/**
 * Without `--prune`, the same of a kind the prune never deletes (a directory configuration): told to
 * plan with `--prune`, the reader found it under neither "To prune" nor "Not pruned".
 */
function neverPrunedNotDeclaredLines(addresses: readonly string[]): string[] {
  const n = addresses.length;
  const one = n === 1;
  return [
    `Not declared, never pruned: ${n} object${one ? '' : 's'} the inventory records as Converge's ${one ? 'is' : 'are'} no longer in the manifest, of a kind --prune never deletes; ${one ? 'it is' : 'they are'} left as ${one ? 'it is' : 'they are'}.`,
    `Declare ${one ? 'it' : 'them'} with \`ensure: absent\` to remove ${one ? 'it' : 'them'}, or drop a record with \`converge inventory forget ADDRESS --yes\` to leave the object unmanaged.`,
  ];
}

/**
 * A prune that read no inventory (a plan token that may not see its workspace, a misspelt name, a
 * first run): the same words in every rendering, so a plan never reads "nothing to delete" for it.
 */
export function inventoryAbsentLine(absent: string): string {
  return `No inventory was read (${absent}): --prune knows of no object Converge made, so it deletes none by the inventory. Expected on a first run; otherwise check CONVERGE_INVENTORY and that this token may read it.`;
}

/** What `--prune` leaves because its kind refuses the deletion: a headline, then what to do. */
function pruneRefusedLines(addresses: readonly string[]): string[] {
  const n = addresses.length;
  const one = n === 1;
  return [
    `Not pruned: ${n} object${one ? '' : 's'} the inventory records as Converge's that no manifest may delete (a workspace that holds a Converge inventory: deleting ${one ? 'it' : 'one'} drops the records of the runs that keep theirs there).`,
    `To stop this manifest managing ${one ? 'it' : 'one'}, drop the record with \`converge inventory forget ADDRESS --yes\`; a workspace no run keeps its inventory in any more is deleted with \`converge workspace delete\`, outside the manifest.`,
  ];
}

/**
 * What `--prune` leaves that carries Converge's ownership marker but is not this inventory's: a
 * headline, then how to delete or adopt it. The same in every rendering.
 */
function markedNotRecordedLines(addresses: readonly string[]): string[] {
  const n = addresses.length;
  const one = n === 1;
  return [
    `Not pruned: ${n} object${one ? '' : 's'} with Converge's ownership marker that this inventory does not record as Converge's: ${one ? 'it is' : 'they are'} another manifest's (its own inventory), made before this inventory, or made by hand and since updated by Converge; --prune deletes only what this inventory records.`,
    `To delete ${one ? 'it' : 'one'} from this manifest, declare it with \`metadata.ensure: absent\`; to make ${one ? 'it' : 'one'} this manifest's, declare it and adopt it with \`converge import ADDRESS -f PATH\`. Two manifests sharing an organization or namespace keep apart with a PruneScope namePrefix each.`,
  ];
}

/**
 * What `--prune` leaves because the manifest no longer manages its scope: a headline, then how to
 * prune there after all. The same in every rendering.
 */
function ownedOutOfScopeLines(addresses: readonly string[]): string[] {
  const n = addresses.length;
  const one = n === 1;
  return [
    `Not pruned: ${n} object${one ? '' : 's'} the inventory records as created by Converge, where the manifest declares no object of ${one ? 'its' : 'their'} kind any more on the same connection and in the same organization or namespace; --prune reaches only scopes the manifest manages.`,
    `To delete ${one ? 'it' : 'them'}, declare a PruneScope of ${one ? 'its' : 'their'} kind, namespace and connection (with allowEmpty: true; ${PRUNE_SCOPE_LIMITS}); if ${one ? 'it is' : 'one is'} gone or no longer Converge's, drop the record with \`converge inventory forget ADDRESS --yes\`.`,
  ];
}

/**
 * What `--prune` leaves of a kind whose prune the manifest's PruneScopes limit, outside all of them:
 * a headline, then how to prune there after all. The same in every rendering.
 */
function ownedOutsidePruneScopesLines(addresses: readonly string[]): string[] {
  const n = addresses.length;
  const one = n === 1;
  return [
    `Not pruned: ${n} object${one ? '' : 's'} the inventory records as Converge's (created or imported), no longer in the manifest, outside every PruneScope the manifest declares for ${one ? 'its' : 'their'} kind; a PruneScope limits its kind's prune to the scopes declared.`,
    `To delete ${one ? 'it' : 'them'}, declare a PruneScope that covers ${one ? 'it' : 'them'} too (${one ? 'its' : 'their'} kind, namespace and connection; allowEmpty: true where the manifest declares none of the kind); if ${one ? 'it is' : 'one is'} gone or no longer Converge's, drop the record with \`converge inventory forget ADDRESS --yes\`.`,
  ];
}

/**
 * What `--prune` leaves because the inventory records it on a Connection the manifest no longer
 * declares: a headline naming the connections, then the two ways out. The same in every rendering.
 */
function undeclaredConnectionLines(objects: readonly { connection: string }[]): string[] {
  const n = objects.length;
  const one = n === 1;
  // Connection names come from the inventory, which anyone with its file or workspace may have written.
  const names = [...new Set(objects.map((o) => printable(o.connection)))].sort();
  const list = names.length === 1 ? names[0]! : `${names.slice(0, -1).join(', ')} and ${names.at(-1)!}`;
  const plural = names.length === 1 ? '' : 's';
  return [
    `Not pruned: ${n} object${one ? '' : 's'} the inventory records as Converge's, on connection${plural} ${list}, which the manifest no longer declares; --prune cannot read or delete ${one ? 'it' : 'them'} without the Connection's address and token.`,
    // The hint names no connection: markdown prints it as it is, and the names come from the inventory.
    `To delete ${one ? 'it' : 'them'}, declare ${plural ? 'those Connections' : 'that Connection'} again (same name and service) and run --prune; to stop tracking ${one ? 'it' : 'one'}, drop ${one ? 'its' : 'the'} record with \`converge inventory forget ADDRESS --yes\`.`,
  ];
}

/**
 * What follows "No changes." when nothing differs: the whole manifest matches, or, for a targeted
 * plan, only the objects it compared (the others may well differ). The same in every rendering.
 */
export function noChangesClause(plan: Pick<Plan, 'targeting' | 'changes'>): string {
  // What a kind holds back (someone else's lock, a state push waiting for it) still differs from the
  // manifest: "matches" was false of it, and a nightly check read the workspace as in step.
  const heldBack = plan.changes.filter((c) => c.differs?.length).length;
  const differs =
    heldBack === 0
      ? ''
      : ` ${heldBack} object${heldBack === 1 ? '' : 's'} still differ${heldBack === 1 ? 's' : ''} from the manifest in what Converge leaves alone on purpose (see their notes).`;
  const t = plan.targeting;
  const leftOut = t?.pruneLeftOut?.length ?? 0;
  const notListed = t?.pruneKindsNotListed?.length ?? 0;
  // Patterns that took every object (and every deletion) compared the whole manifest.
  if (!t || (t.selected === t.total && leftOut === 0 && notListed === 0))
    return heldBack === 0 ? 'Live state matches the manifest.' : `Nothing to apply.${differs}`;
  // Held back, an object needs no change but does not match: not said to.
  const planned =
    heldBack === 0
      ? `The ${t.selected} object${t.selected === 1 ? '' : 's'} planned match${t.selected === 1 ? 'es' : ''} live state`
      : `The ${t.selected} object${t.selected === 1 ? '' : 's'} planned need${t.selected === 1 ? 's' : ''} no change`;
  const notCompared =
    t.selected === t.total
      ? ''
      : `; the other ${t.total - t.selected} ${t.total - t.selected === 1 ? 'was' : 'were'} not compared`;
  const deletions =
    (leftOut === 0 ? '' : `; ${leftOut} deletion${leftOut === 1 ? '' : 's'} left out (above)`) +
    (notListed === 0 ? '' : '; deletions of other kinds not looked at (above)');
  return `${planned}${notCompared}${deletions}.${differs}`;
}

/** The heading of the plan's prune section, the same in every rendering. */
export function prunedHeadline(count: number): string {
  // "manages", not "created": an object adopted with `converge import` is pruned as well.
  return `To prune: ${count} object${count === 1 ? '' : 's'} Converge manages that the manifest no longer declares`;
}
