/**
 * What the manifest layer needs to know about a kind: a subset of the ResourceKind contract, so
 * tests can pass small schema-only kinds and the CLI passes the real registry unchanged.
 */
import type {
  AnyResourceKind,
  LocalFiles,
  Namespaced,
  Prunable,
  SensitiveAttributes,
  SpecRules,
  WriteOnlyAttributes,
} from '../resources/contract.js';

/** The required identity and schemas, and the parts of the capability groups the manifest reads. */
export type ManifestKind = Pick<
  AnyResourceKind,
  'kind' | 'service' | 'description' | 'nameSchema' | 'specSchema'
> &
  Partial<
    Namespaced &
      SpecRules &
      SensitiveAttributes &
      WriteOnlyAttributes &
      Pick<Prunable, 'ownership'> &
      Pick<LocalFiles, 'localFiles'>
  >;

/**
 * What the manifest layer needs to know about a service: its name (for `Connection.service`) and the
 * settings its connections have beyond address and token (a workspace connection's `organization`).
 */
export interface ManifestService {
  readonly name: string;
  readonly settings?: readonly { readonly key: string; readonly description: string }[];
}

const derived = new WeakMap<readonly ManifestKind[], readonly ManifestService[]>();

/** The services the kinds name, without settings: for callers (tests) that pass kinds alone. */
export function servicesOfKinds(kinds: readonly ManifestKind[]): readonly ManifestService[] {
  let found = derived.get(kinds);
  if (!found) {
    found = [...new Set(kinds.map((k) => k.service))].map((name) => ({ name }));
    derived.set(kinds, found);
  }
  return found;
}

export const API_VERSION = 'converge/v1';

/** The four fields of every document, in the order they are written. */
export const ENVELOPE_FIELDS = ['apiVersion', 'kind', 'metadata', 'spec'] as const;
