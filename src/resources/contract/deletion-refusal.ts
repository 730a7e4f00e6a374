import type { Observed } from './core.js';

/**
 * Implemented by a kind some of whose live objects a manifest must never delete: the planner refuses
 * such a deletion (`ensure: absent`, a prune) as a problem of the object, with the kind's reason and
 * the way to do it outside a manifest if it is meant.
 */
export interface DeletionRefusal<Live = unknown> {
  /** Why `observed` may not be deleted by a plan, or undefined when it may. */
  refuseDeletion(observed: Observed<Live>): string | undefined;
}

/** The kind's reason to refuse deleting `observed`, when it has one. */
export function deletionRefused(kind: object | undefined, observed: Observed): string | undefined {
  const refusal = kind as Partial<DeletionRefusal> | undefined;
  return typeof refusal?.refuseDeletion === 'function' ? refusal.refuseDeletion(observed) : undefined;
}
