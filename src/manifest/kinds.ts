/**
 * What the manifest layer needs to know about a kind: a subset of the ResourceKind contract, so
 * tests can pass small schema-only kinds and the CLI passes the real registry unchanged.
 */
import type { AnyResourceKind } from '../resources/contract.js';

export type ManifestKind = Pick<
  AnyResourceKind,
  'kind' | 'service' | 'description' | 'namespaced' | 'nameSchema' | 'specSchema'
> &
  Partial<Pick<AnyResourceKind, 'ownership' | 'validateSpec'>>;

export const API_VERSION = 'converge/v1';

/** The four fields of every document, in the order they are written. */
export const ENVELOPE_FIELDS = ['apiVersion', 'kind', 'metadata', 'spec'] as const;
