import type { Desired, KindContext, PlanProblem } from './core.js';

/**
 * Implemented by a kind whose manifest refers to things it does not manage (a policy a role links,
 * the organization a workspace lives in, the mount a directory entry needs): plan-time checks that
 * need the service and report problems at the manifest's lines.
 */
export interface ServiceChecks<Spec = Record<string, unknown>> {
  /** Called once per kind with every desired object of that kind, so a kind can read what it needs once. */
  check(ctx: KindContext, desired: Desired<Spec>[]): Promise<PlanProblem[]>;
}

export function hasServiceChecks<K extends object>(kind: K | undefined): kind is K & ServiceChecks {
  return typeof (kind as Partial<ServiceChecks> | undefined)?.check === 'function';
}
