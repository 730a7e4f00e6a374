import type { Observed } from './core.js';

/**
 * Implemented by a kind whose service accepts secrets it never returns (a bind password, a client
 * key). They are sensitive too. The kind's `compare` need not look at them: the planner tells a
 * change from a keyed digest of what Converge last applied and sets `Desired.changedWriteOnly`;
 * `update` then sends only those, and a listed path the spec leaves out is cleared: sent as the
 * empty string, which the service keeps as "not set" (`CLEARED_WRITE_ONLY`).
 */
export interface WriteOnlyAttributes<Live = unknown> {
  /** The attributes, as dotted paths in the form `SensitiveAttributes.sensitive` uses. */
  readonly writeOnly: readonly string[];
  /**
   * The `writeOnly` paths this live object most likely has set, told from what the service shows (a
   * bind password where a bind DN is set). `converge export` writes them as placeholders, and the plan
   * notes such a value when no run recorded it. Default: none.
   */
  likelySet?(observed: Observed<Live>): readonly string[];
}

/** The value a clear sends, and the value the record of a cleared attribute is the digest of. */
export const CLEARED_WRITE_ONLY = '';

/** What the kind says the live object most likely holds of its write-only values (none by default). */
export function likelySetWriteOnly(kind: object | undefined, observed: Observed): readonly string[] {
  if (!hasWriteOnlyAttributes(kind)) return [];
  return (kind as WriteOnlyAttributes).likelySet?.(observed) ?? [];
}

export function hasWriteOnlyAttributes<K extends object>(
  kind: K | undefined,
): kind is K & WriteOnlyAttributes {
  const paths = (kind as Partial<WriteOnlyAttributes> | undefined)?.writeOnly;
  return Array.isArray(paths) && paths.length > 0;
}

/** The kind's write-only attributes; none for a kind without the group. */
export function writeOnlyPaths(kind: object | undefined): readonly string[] {
  return hasWriteOnlyAttributes(kind) ? kind.writeOnly : [];
}
