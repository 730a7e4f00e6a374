/**
 * Change detection for write-only attributes (a bind password the service never returns): Converge
 * keeps a keyed digest of each value it last applied, per object and attribute, and compares the
 * manifest's value with it. An equal digest means unchanged: no diff and nothing re-sent. A different
 * or missing digest means the value is set on apply, shown as `(sensitive value changed)`. A value
 * Converge recorded that the manifest dropped is cleared (the kind sends the service's empty value). The digest
 * is an HMAC, so a stolen inventory does not let anyone test guesses without the key.
 */
import {
  type AnyResourceKind,
  type AttributeDiff,
  CLEARED_WRITE_ONLY,
  type Desired,
  likelySetWriteOnly,
  type Observed,
  writeOnlyPaths,
} from '../resources/contract.js';
import { SENSITIVE } from './render/format.js';
import { valueAtPath } from './masking.js';

export interface WriteOnlyDigests {
  /** The keyed digest of an object's attribute value (bound to the object and attribute). */
  digest(address: string, path: string, value: unknown): string;
  /** What was recorded for an object's attribute when Converge last applied it. */
  recorded(address: string, path: string): string | undefined;
  record(address: string, path: string, digest: string): void;
  /** Drops what was recorded for an object (it was deleted), or for one attribute (it was cleared). */
  forget(address: string, path?: string): void;
  /**
   * The id of the state key an object's digests were recorded under, when it is not this run's key
   * (runs sharing an inventory with different keys): none can match, and the plan says why.
   */
  recordedUnderOtherKey?(address: string): string | undefined;
  /** This run's state key: its id and where it came from (`CONVERGE_STATE_KEY`, a state.key path). */
  currentKey?(): { id: string; source: string } | undefined;
}

/**
 * Whether Converge's last write cleared the attribute: recorded as the digest of the empty value, so
 * that "cleared by Converge" is not read as "never recorded" (which the service may well hold).
 */
export function clearedByConverge(
  digests: Pick<WriteOnlyDigests, 'recorded' | 'digest'> | undefined,
  address: string,
  path: string,
): boolean {
  const recorded = digests?.recorded(address, path);
  return recorded !== undefined && recorded === digests!.digest(address, path, CLEARED_WRITE_ONLY);
}

/**
 * Why a recorded digest did not match, when the reason is the key rather than the value: said at the
 * changed line, or every run shows the value changed and sends it again with no hint why.
 */
function otherKeyNote(digests: WriteOnlyDigests, address: string): string | undefined {
  const recordedKey = digests.recordedUnderOtherKey?.(address);
  if (recordedKey === undefined) return undefined;
  const current = digests.currentKey?.();
  return `recorded under another state key (${recordedKey}; this run's is ${current ? `${current.id}, from ${current.source}` : 'another'}), so whether it changed cannot be told and it will be set again: runs that share an inventory need the same CONVERGE_STATE_KEY`;
}

/** The kind's write-only attributes the manifest sets for this object, with their values. */
export function writeOnlyValues(kind: AnyResourceKind, desired: Desired): [string, unknown][] {
  return writeOnlyPaths(kind)
    .map((path): [string, unknown] => [path, valueAtPath(desired.spec, path)])
    .filter(([, value]) => value !== undefined);
}

/** Diffs and the changed paths of an existing object's write-only attributes. */
export function compareWriteOnly(
  kind: AnyResourceKind,
  address: string,
  desired: Desired,
  digests: WriteOnlyDigests | undefined,
): { diffs: AttributeDiff[]; changed: string[] } {
  const diffs: AttributeDiff[] = [];
  const changed: string[] = [];
  // A value Converge set that the manifest no longer has is cleared, as any attribute dropped from
  // the manifest returns to the service's default; never-recorded absent values are left alone.
  for (const path of writeOnlyPaths(kind)) {
    if (
      valueAtPath(desired.spec, path) !== undefined ||
      digests?.recorded(address, path) === undefined ||
      clearedByConverge(digests, address, path)
    )
      continue;
    changed.push(path);
    const otherKey = digests ? otherKeyNote(digests, address) : undefined;
    diffs.push({
      path,
      op: 'remove',
      before: SENSITIVE,
      sensitive: true,
      note: `no longer in the manifest: it will be cleared${otherKey ? ` (${otherKey})` : ''}`,
    });
  }
  for (const [path, value] of writeOnlyValues(kind, desired)) {
    const recorded = digests?.recorded(address, path);
    if (recorded !== undefined && recorded === digests?.digest(address, path, value)) continue;
    changed.push(path);
    const note =
      recorded === undefined
        ? 'not recorded by this Converge (the service never returns it): it will be set'
        : otherKeyNote(digests!, address);
    diffs.push({
      path,
      op: 'change',
      before: SENSITIVE,
      after: SENSITIVE,
      sensitive: true,
      ...(note !== undefined ? { note } : {}),
    });
  }
  return { diffs, changed };
}

/** What Converge had recorded for each of the object's write-only attributes (see `Change.writeOnlyBasis`). */
export function writeOnlyBasis(
  kind: AnyResourceKind,
  address: string,
  digests: WriteOnlyDigests,
): Record<string, string | null> {
  const basis: Record<string, string | null> = {};
  for (const path of writeOnlyPaths(kind)) basis[path] = digests.recorded(address, path) ?? null;
  return basis;
}

/** The first write-only attribute whose record moved since `basis` was taken, if any. */
export function movedWriteOnly(
  basis: Readonly<Record<string, string | null>>,
  address: string,
  digests: WriteOnlyDigests,
): string | undefined {
  return Object.keys(basis).find((path) => (digests.recorded(address, path) ?? null) !== basis[path]);
}

/** Whether a diff the kind reported is about a write-only attribute (the planner decides those). */
export function isWriteOnlyDiff(kind: AnyResourceKind, diff: AttributeDiff): boolean {
  return writeOnlyPaths(kind).some((p) => diff.path === p || diff.path.startsWith(`${p}.`));
}

/**
 * Notes for write-only attributes the manifest leaves out, that this Converge never recorded, and
 * that the service most likely holds all the same (the kind says so from what it shows: a bind
 * password where a bind DN is set). Such a value is left as it is, and without a word the plan read
 * "no changes" on a fresh runner where one with the inventory plans to clear it.
 */
export function untrackedWriteOnlyNotes(
  kind: AnyResourceKind,
  address: string,
  desired: Desired,
  observed: Observed,
  digests: WriteOnlyDigests | undefined,
): string[] {
  // The kind's own reading of what the live object most likely holds, as `converge export` uses it.
  const held = new Set(likelySetWriteOnly(kind, observed));
  if (held.size === 0) return [];
  return writeOnlyPaths(kind)
    .filter(
      (path) =>
        held.has(path) &&
        valueAtPath(desired.spec, path) === undefined &&
        digests?.recorded(address, path) === undefined,
    )
    .map(
      (path) =>
        `${path} is not in the manifest and this Converge has no record of setting it: the service most likely holds one (it never shows it), which is left as it is (write ${path}: "" to clear it)`,
    );
}

/**
 * The write-only attributes a live object most likely holds: those this Converge recorded setting,
 * and those the kind reads as set from what the service shows (a bind password where a bind DN is
 * set). A deletion lists them, values never shown: deleting a directory configuration clears its
 * bind password too, and the plan said so only of the fields a read returns.
 */
export function heldWriteOnly(
  kind: AnyResourceKind,
  address: string,
  observed: Observed,
  digests: Pick<WriteOnlyDigests, 'recorded' | 'digest'> | undefined,
): string[] {
  const likely = new Set(likelySetWriteOnly(kind, observed));
  return writeOnlyPaths(kind).filter(
    (path) =>
      !clearedByConverge(digests, address, path) &&
      (likely.has(path) || (digests?.recorded(address, path) ?? null) !== null),
  );
}
