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
