import type { Desired, Observed, ResourceKey } from './core.js';

/**
 * An object a kind is asked about for dependencies: one the manifest declares (`desired`), or a live
 * one about to be deleted (`observed`), or both.
 */
export interface DependencySubject<Spec = Record<string, unknown>, Live = unknown> {
  key: ResourceKey;
  desired?: Desired<Spec>;
  observed?: Observed<Live>;
}

/**
 * Implemented by a kind whose objects need others first (a directory user: its groups and its
 * mount's configuration). The planner orders creates and updates after what they need, and
 * deletions the other way round.
 */
export interface Dependencies<Spec = Record<string, unknown>, Live = unknown> {
  /** What the object needs, as complete keys (namespace and connection filled in); keys not in the plan are ignored. */
  dependencies(subject: DependencySubject<Spec, Live>): ResourceKey[];
}

export function hasDependencies<K extends object>(kind: K | undefined): kind is K & Dependencies {
  return typeof (kind as Partial<Dependencies> | undefined)?.dependencies === 'function';
}
