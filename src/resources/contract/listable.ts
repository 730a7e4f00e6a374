import type { KindContext, Observed } from './core.js';

/** Where a list reads: one namespace of one connection. */
export interface ListScope {
  namespace?: string;
  connection?: string;
}

/**
 * Implemented by a kind whose service can list the objects of a scope. The planner lists instead of
 * reading one by one when the manifest holds several objects of one scope, and prune needs it.
 */
export interface Listable<Live = unknown> {
  /** Every object of the kind in the scope, with as few requests as the API allows. */
  list(ctx: KindContext, scope: ListScope): Promise<Observed<Live>[]>;
}

export function isListable<K extends object>(kind: K | undefined): kind is K & Listable {
  return typeof (kind as Partial<Listable> | undefined)?.list === 'function';
}
