import type { Comparison, Desired, KindContext, Observed, PlanProblem } from './core.js';

/**
 * Implemented by a kind whose service plans a change itself (a scheduler's dry run of a job): the
 * service turns the manifest into the object it would store, says what a create would do, and
 * compares the object with what it stores. The planner keeps that answer beside the comparison
 * (`Change.serverPlan`) and hands it to the kind's `compare`; it is never part of `Observed`.
 */
export interface ServerSidePlan<Spec = Record<string, unknown>, Live = unknown, Plan = unknown> {
  /**
   * Service-side preparation of the desired object, after local files were read and before the
   * live object is: what only the service can turn into the object it stores (a text job
   * specification, parsed by the service's own parser). The result must depend on the manifest
   * alone, so a saved plan can tell whether the manifest changed; problems point into the manifest.
   */
  prepare(
    ctx: KindContext,
    desired: Desired<Spec>,
  ): Promise<{ desired: Desired<Spec>; problems: PlanProblem[] }>;
  /**
   * The service's plan of the desired object against the live one, handed to `compare`; `undefined`
   * when there is nothing to plan (the specification could not be read: that is already a problem).
   */
  serverPlan(ctx: KindContext, desired: Desired<Spec>, observed: Observed<Live>): Promise<Plan | undefined>;
  /**
   * What the service says creating the object would do (allocations placed, capacity shortfalls),
   * shown with a `create` as `Comparison.notes` are with an update, and what it would refuse
   * (`problems`, pointers relative to the manifest document). Called for objects to be created.
   */
  previewCreate(
    ctx: KindContext,
    desired: Desired<Spec>,
  ): Promise<Pick<Comparison, 'notes' | 'problems' | 'impact'>>;
}

export function hasServerSidePlan<K extends object>(kind: K | undefined): kind is K & ServerSidePlan {
  return typeof (kind as Partial<ServerSidePlan> | undefined)?.serverPlan === 'function';
}
