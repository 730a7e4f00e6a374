import type { TSchema } from '@sinclair/typebox';
import type { ConnectionSettings, ResourceKey } from './core.js';

/**
 * Implemented by a kind whose objects live in a namespace of their service (`metadata.namespace`
 * means something: a role's namespace, a workspace's organization, a directory entry's mount). A kind
 * without it has no namespace: the manifest may not give one.
 */
export interface Namespaced {
  /**
   * The namespace an object without `metadata.namespace` lives in (a workspace: the connection's
   * organization; a role: `default`), from the connection's settings alone. It is filled in right
   * after loading, before validation's duplicate check, so the same object always has the same key
   * and prune scopes compare like with like. Throws with a message when there is none to be had.
   */
  effectiveNamespace(key: ResourceKey, settings: ConnectionSettings): string;
  /** What the service calls a namespace, for messages (`organization`); default `namespace`. */
  readonly namespaceLabel?: string;
  /**
   * The `metadata` field that holds the namespace, when the service's word for it reads better in
   * a manifest than `namespace` (a directory group's `mount`); default `namespace`.
   */
  readonly namespaceField?: string;
  /** Schema of the namespace (a mount path's form), a TypeBox string schema; default any non-empty string. */
  readonly namespaceSchema?: TSchema;
}

export function isNamespaced<K extends object>(kind: K | undefined): kind is K & Namespaced {
  return typeof (kind as Partial<Namespaced> | undefined)?.effectiveNamespace === 'function';
}

/** The `metadata` field a manifest names the kind's namespace with (`namespace` unless the kind says). */
export function namespaceFieldOf(kind: object | undefined): string {
  return (isNamespaced(kind) ? kind.namespaceField : undefined) ?? 'namespace';
}
