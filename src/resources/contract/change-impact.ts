import type { AttributeDiff, Desired, KindContext, Observed, ResourceKey } from './core.js';

/** A planned change as a kind's `impact` sees it. */
export interface ImpactSubject<Spec = Record<string, unknown>, Live = unknown> {
  key: ResourceKey;
  action: 'create' | 'update' | 'replace' | 'delete';
  diffs: readonly AttributeDiff[];
  desired?: Desired<Spec>;
  observed?: Observed<Live>;
}

/**
 * Implemented by a kind that can tell a change's blast radius beyond the object itself (the users a
 * directory group's policies reach, from the manifest and the service). What the object alone tells
 * goes in `Comparison.impact` instead.
 */
export interface ChangeImpact<Spec = Record<string, unknown>, Live = unknown> {
  /**
   * Lines as `Comparison.impact`'s, one list per subject in the same order. Called once per kind
   * with every changed object of it, after every object was compared, so what it reads it reads
   * once; `manifest` is every desired object.
   */
  impact(
    ctx: KindContext,
    subjects: readonly ImpactSubject<Spec, Live>[],
    manifest: readonly Desired[],
  ): Promise<string[][]>;
}

export function hasChangeImpact<K extends object>(kind: K | undefined): kind is K & ChangeImpact {
  return typeof (kind as Partial<ChangeImpact> | undefined)?.impact === 'function';
}
