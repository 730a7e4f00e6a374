import type { AttributeDiff, Desired, KindContext, Observed, ResourceKey } from './core.js';
import type { ListScope } from './listable.js';

/** A planned change as a kind's `impact` sees it. */
export interface ImpactSubject<Spec = Record<string, unknown>, Live = unknown> {
  key: ResourceKey;
  action: 'create' | 'update' | 'replace' | 'delete';
  diffs: readonly AttributeDiff[];
  desired?: Desired<Spec>;
  observed?: Observed<Live>;
}

/**
 * What the plan already read, handed to `impact` so that a blast radius drawn from objects the plan
 * listed or observed costs no request of its own (the drift plan once read every directory user twice).
 */
export interface PlanReads {
  /** The plan's list of a kind in a scope when it made one (settled, no request); else undefined. */
  listed(kind: string, scope: ListScope): Promise<Observed[]> | undefined;
  /**
   * The plan's read of an object by key: what it found, `null` when it read the object and found
   * nothing, `undefined` when it did not read it.
   */
  observed(key: ResourceKey): Observed | null | undefined;
  /**
   * Whether the plan deletes the object (`ensure: absent`, `--prune`): a blast radius that named a
   * user the same plan deletes read as that user keeping different policies.
   */
  deleting?(key: ResourceKey): boolean;
}

/** Reads for an `impact` called outside a plan: nothing read before. */
export const NO_PLAN_READS: PlanReads = { listed: () => undefined, observed: () => undefined };

/**
 * Implemented by a kind that can tell a change's blast radius beyond the object itself (the users a
 * directory group's policies reach, from the manifest and the service). What the object alone tells
 * goes in `Comparison.impact` instead.
 */
export interface ChangeImpact<Spec = Record<string, unknown>, Live = unknown> {
  /**
   * Lines as `Comparison.impact`'s, one list per subject in the same order. Called once per kind
   * with every changed object of it, after every object was compared, so what it reads it reads
   * once; `manifest` is every desired object; `reads` what the plan read, to be reused rather than
   * read again.
   */
  impact(
    ctx: KindContext,
    subjects: readonly ImpactSubject<Spec, Live>[],
    manifest: readonly Desired[],
    reads: PlanReads,
  ): Promise<string[][]>;
}

export function hasChangeImpact<K extends object>(kind: K | undefined): kind is K & ChangeImpact {
  return typeof (kind as Partial<ChangeImpact> | undefined)?.impact === 'function';
}
