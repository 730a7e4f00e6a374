import type { Desired, Observed } from './core.js';
import type { AnyResourceKind } from './kind.js';

/**
 * Implemented by a kind whose spec or live object reads better in another form than as written or
 * as read (canonical lists, a parsed job's own fields, a live object in manifest shape). Kinds stay
 * free of rendering: these are attribute values, which the renderers lay out. A kind without it is
 * shown with its spec as the manifest wrote it and its live object as the service returned it.
 */
export interface RenderDetails<Spec = Record<string, unknown>, Live = unknown> {
  /** The desired object as attribute values, for the `create` rendering (`+ Name = "x"`). */
  render(desired: Desired<Spec>): Record<string, unknown>;
  /** The live object as attribute values in manifest shape, for `delete` rendering and `--json`. */
  describe(observed: Observed<Live>): Record<string, unknown>;
  /**
   * Top-level attributes whose value is a list of items compared as a set (a user's `groups`, sent
   * to the service as one comma-separated string): a diff under one of them adds or removes an item,
   * and a plan shows the items that come and go rather than the attribute as a whole.
   */
  readonly listAttributes?: readonly string[];
}

export function hasRenderDetails<K extends object>(kind: K | undefined): kind is K & RenderDetails {
  return typeof (kind as Partial<RenderDetails> | undefined)?.render === 'function';
}

/** The attributes a kind declares as lists of items (`RenderDetails.listAttributes`); none by default. */
export function listAttributesOf(kind: AnyResourceKind): readonly string[] {
  return hasRenderDetails(kind) ? (kind.listAttributes ?? []) : [];
}

/** The desired object's attribute values, as the kind renders them or as the manifest wrote them. */
export function desiredAttributes(kind: AnyResourceKind, desired: Desired): Record<string, unknown> {
  return hasRenderDetails(kind) ? kind.render(desired) : { ...desired.spec };
}

/** The live object's attribute values, as the kind describes it or as the service returned it. */
export function liveAttributes(kind: AnyResourceKind, observed: Observed): Record<string, unknown> {
  if (hasRenderDetails(kind)) return kind.describe(observed);
  const live: unknown = observed.live;
  return live !== null && typeof live === 'object' && !Array.isArray(live)
    ? { ...(live as Record<string, unknown>) }
    : { value: live };
}
