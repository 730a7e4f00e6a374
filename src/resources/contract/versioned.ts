/**
 * Implemented by a kind whose service writes with check-and-set on the token `Observed.version`
 * holds (a job's JobModifyIndex): `update` sends the version it was given and the service refuses
 * the write when the object moved since, so a change made by someone else after the read is never
 * overwritten. Kinds without it may still report a version: the applier then compares it before a
 * saved plan's change, but the write itself is not guarded.
 */
export interface Versioned {
  /** What the service calls the check-and-set token, for messages (`JobModifyIndex`). */
  readonly versionLabel: string;
}

export function isVersioned<K extends object>(kind: K | undefined): kind is K & Versioned {
  return typeof (kind as Partial<Versioned> | undefined)?.versionLabel === 'string';
}

/** How messages name a kind's version: its service's word, or `version`. */
export function versionLabelOf(kind: object | undefined): string {
  return isVersioned(kind) ? kind.versionLabel : 'version';
}

/**
 * Implemented by a kind whose version is a composite of several fields (a workspace's update time,
 * lock and current state): what moved between two of its versions, in words, for a stale refusal
 * that would otherwise say only "it changed".
 */
export interface VersionChanges {
  versionChange(planned: unknown, now: unknown): string | undefined;
}

export function hasVersionChanges<K extends object>(kind: K | undefined): kind is K & VersionChanges {
  return typeof (kind as Partial<VersionChanges> | undefined)?.versionChange === 'function';
}
