import type { KindContext, Observed, ResourceKey } from './core.js';

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
  /**
   * For kinds whose `list` answers with less than `observe` (the job list has no group counts): the
   * object read whole, before a prune shows it for deletion. Only prune candidates pay the read.
   */
  readWhole?(ctx: KindContext, listed: Observed<Live>): Promise<Observed<Live>>;
}

export function isListable<K extends object>(kind: K | undefined): kind is K & Listable {
  return typeof (kind as Partial<Listable> | undefined)?.list === 'function';
}

/** The key of an object a list found: the kind and name, in the scope it was listed in. */
export function listedKey(kind: string, name: string, scope: ListScope): ResourceKey {
  return {
    kind,
    name,
    ...(scope.namespace === undefined ? {} : { namespace: scope.namespace }),
    ...(scope.connection === undefined ? {} : { connection: scope.connection }),
  };
}
