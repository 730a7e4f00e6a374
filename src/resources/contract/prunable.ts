import type { Observed, PruneScope, ResourceKey } from './core.js';
import { isListable, type Listable } from './listable.js';

/**
 * Implemented by a kind whose live objects `--prune` may delete when the manifest no longer declares
 * them: it can list them and tell which are Converge's. Kinds without it are never pruned.
 */
export interface Prunable<Live = unknown> extends Listable<Live> {
  /**
   * How Converge knows it owns a live object: `marker` when the service stores a marker Converge
   * sets on create (a workspace's source-name, a job's Meta), so every scope the manifest manages
   * may be pruned; `declared-scope` when it stores none (roles), so only scopes the manifest
   * declares explicitly are.
   */
  readonly ownership: 'marker' | 'declared-scope';
  /**
   * For a `marker` kind whose update also writes the marker: where the plan shows it
   * (`Meta.converge-managed`), so `converge import` of an object made elsewhere can say that the next
   * plan adds it. Absent when only a create sets the marker.
   */
  readonly markerAttribute?: string;
  /** Whether prune may delete this live object inside the given scope. */
  owns(observed: Observed<Live>, scope: PruneScope): boolean;
}

export function isPrunable<K extends object>(kind: K | undefined): kind is K & Prunable {
  const candidate = kind as Partial<Prunable> | undefined;
  return isListable(kind) && typeof candidate?.owns === 'function' && candidate.ownership !== undefined;
}

/** Whether a key lies in a prune scope (keys and scopes compared after namespaces were filled in). */
export function inPruneScope(key: ResourceKey, scope: PruneScope): boolean {
  return (
    key.kind === scope.kind &&
    (key.connection ?? '') === (scope.connection ?? '') &&
    key.namespace === scope.namespace &&
    (scope.namePrefix === undefined || key.name.startsWith(scope.namePrefix))
  );
}
