import type { Desired, KindContext, Observed } from './core.js';

/**
 * Implemented by a kind that needs further reads for some desired objects only (a workspace's
 * current state when the manifest seeds one, who holds its lock). The planner makes them after the
 * objects were read, and the applier again before a saved plan's change, so the change is made
 * against what was reviewed.
 */
export interface DetailReads<Spec = Record<string, unknown>, Live = unknown> {
  /** Returns the observation to compare against. */
  readDetails(ctx: KindContext, desired: Desired<Spec>, observed: Observed<Live>): Promise<Observed<Live>>;
}

export function hasDetailReads<K extends object>(kind: K | undefined): kind is K & DetailReads {
  return typeof (kind as Partial<DetailReads> | undefined)?.readDetails === 'function';
}
