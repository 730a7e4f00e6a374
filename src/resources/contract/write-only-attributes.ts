/**
 * Implemented by a kind whose service accepts secrets it never returns (a bind password, a client
 * key). They are sensitive too. The kind's `compare` need not look at them: the planner tells a
 * change from a keyed digest of what Converge last applied and sets `Desired.changedWriteOnly`;
 * `update` then sends only those, and a listed path the spec leaves out is cleared.
 */
export interface WriteOnlyAttributes {
  /** The attributes, as dotted paths in the form `SensitiveAttributes.sensitive` uses. */
  readonly writeOnly: readonly string[];
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
