import type { Desired, PlanProblem } from './core.js';

/**
 * Implemented by a kind whose spec names files next to the manifest (a job's `specFile`, a
 * workspace's seed `state`): the manifest layer checks the paths at load, and the kind reads them
 * before any service is contacted.
 */
export interface LocalFiles<Spec = Record<string, unknown>> {
  /**
   * The spec fields that name a file, relative to the manifest, as top-level field names. The
   * manifest layer refuses, at load and at the value's line, any that lies outside the manifest
   * root or in Converge's state folder, so no service is contacted for such a manifest; the kind
   * reads them later through `resource.readFile`, under the same rules.
   */
  readonly localFiles: readonly string[];
  /** Reads the files; returns the desired object with `local` set, or problems pointing into the manifest. */
  resolve(desired: Desired<Spec>): Promise<{ desired: Desired<Spec>; problems: PlanProblem[] }>;
}

export function hasLocalFiles<K extends object>(kind: K | undefined): kind is K & LocalFiles {
  return typeof (kind as Partial<LocalFiles> | undefined)?.resolve === 'function';
}
