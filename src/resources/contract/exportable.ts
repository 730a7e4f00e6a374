import type { KindContext, Observed, ResourceKey } from './core.js';

/**
 * How a kind writes live objects back as manifest documents (`converge export`), so that planning the
 * export right after shows no changes.
 */
export interface KindExporter<Spec = Record<string, unknown>, Live = unknown> {
  /**
   * The spec a user would write for this live object: no server-filled defaults where the kind can
   * tell them, no ids, no ownership marker. `undefined` for objects the service made itself, which
   * a manifest does not declare. Secret values are the engine's business: it replaces whatever the
   * kind's `sensitive` paths hold here with `${env:…}` placeholders.
   */
  spec(observed: Observed<Live>): Spec | undefined;
  /**
   * For kinds without `list`: the keys to read in a scope (a directory configuration: the mount
   * `--namespace` names, or the default mount).
   */
  keys?(scope: { namespace?: string; connection?: string }): ResourceKey[];
  /**
   * Asked when a scope read came back empty: why nothing can live there (an organization or mount
   * that does not exist, in the words `check` uses), or `undefined` when it exists. Reads answer a
   * missing scope as empty, which suits plan and prune (their check reports it) but would let a
   * misspelt `--namespace` pass for an empty one. Without it, empty and missing look alike (the
   * scheduler lists a namespace that does not exist as empty).
   */
  missingScope?(
    ctx: KindContext,
    scope: { namespace?: string; connection?: string },
  ): Promise<string | undefined>;
}

/**
 * Implemented by a kind whose live objects `converge export` can write as manifest documents; kinds
 * without it are left out of an export.
 */
export interface Exportable<Spec = Record<string, unknown>, Live = unknown> {
  readonly exporter: KindExporter<Spec, Live>;
}

export function isExportable<K extends object>(kind: K | undefined): kind is K & Exportable {
  return typeof (kind as Partial<Exportable> | undefined)?.exporter?.spec === 'function';
}
