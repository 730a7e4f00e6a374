/**
 * Implemented by a kind whose create writes the object by its key (a directory entry, a mount's
 * configuration): sending a create again whose answer was lost is harmless, so the applier retries it
 * directly instead of reading the object back first (see applier/create-once.ts).
 */
export interface UpsertCreate {
  readonly createIsUpsert: true;
}

export function createIsUpsert(kind: object | undefined): kind is UpsertCreate {
  return (kind as Partial<UpsertCreate> | undefined)?.createIsUpsert === true;
}
