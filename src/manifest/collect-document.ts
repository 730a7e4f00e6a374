/**
 * The last step of loading one document, shared by the fast and the position-keeping paths: its
 * plain value is validated and becomes a resource, a connection or a prune scope of the manifest,
 * or its problems are returned.
 */
import { builtinKinds, type ValidDocument } from './builtins.js';
import { confine, type ConfinementOptions, type ManifestFileReader } from '../common/confined-files.js';
import type { DeferredPositions } from './deferred-positions.js';
import type { ManifestKind, ManifestService } from './kinds.js';
import { type ManifestResource, namespaceFieldOf, type ResourceKey } from '../resources/contract.js';
import type { DocumentLocator } from './positions.js';
import type { Manifest, ManifestProblem } from './types.js';
import { isUnderAny, validateDocument } from './validate.js';

export interface DocumentValue {
  value: unknown;
  positions: DocumentLocator;
  /** Pointers of values that came from interpolation (through aliases and merges too). */
  sensitivePointers: ReadonlySet<string>;
  /** Pointers of values whose interpolation failed (already reported). */
  failedPointers: ReadonlySet<string>;
}

export interface FileContext {
  confinement: ConfinementOptions;
  readFile: ManifestFileReader;
  /** The reader an object's own files (`specFile`, `state`) are read with, given the object. */
  readFileFor?: (owner: object) => ManifestFileReader;
  deferredPositions: DeferredPositions;
}

export interface KindsContext {
  kinds: readonly ManifestKind[];
  services: readonly ManifestService[];
}

export async function collectDocument(
  { value, positions, sensitivePointers, failedPointers }: DocumentValue,
  { confinement, readFile, readFileFor, deferredPositions }: FileContext,
  { kinds, services }: KindsContext,
  manifest: Manifest,
): Promise<ManifestProblem[]> {
  const problems = validateDocument(value, { kinds, services, positions, sensitivePointers, failedPointers });
  if (problems.length > 0) {
    noteUnloaded(value, positions, kinds, manifest);
    return problems;
  }

  const document = value as ValidDocument;
  const builtin = builtinKinds(services).find((b) => b.kind === document.kind);
  if (builtin) return builtin.collect(document, positions, manifest, sensitivePointers);
  const { metadata } = document;
  const kind = kinds.find((k) => k.kind === document.kind);
  const refusedFiles = await refusedLocalFiles(kind, document, confinement, positions);
  if (refusedFiles.length > 0) return refusedFiles;
  const source = positions.documentStart();
  const resource: ManifestResource = {
    kind: document.kind,
    name: metadata.name,
    // A resource declared absent may leave its spec out.
    spec: document.spec ?? {},
    source,
    // Not `positions.locate`: that would keep the document's syntax tree for as long as the resource.
    locate: deferredPositions.locator(source),
    sensitivePointers,
    readFile,
  };
  if (readFileFor) resource.readFile = readFileFor(resource);
  const namespaceField = namespaceFieldOf(kind);
  const namespace = (metadata as unknown as Record<string, unknown>)[namespaceField];
  if (typeof namespace === 'string') resource.namespace = namespace;
  if (metadata.connection !== undefined) resource.connection = metadata.connection;
  if (metadata.labels !== undefined) resource.labels = metadata.labels;
  if (metadata.ensure === 'absent') resource.ensure = 'absent';
  manifest.resources.push(resource);
  return [];
}

/**
 * The local files a document names (a job's `specFile`) that it may not read: refused here, at the
 * value, so a manifest that names `/etc/passwd` fails before any service is contacted. Files that do
 * not exist are the kind's to report when it reads them.
 */
async function refusedLocalFiles(
  kind: ManifestKind | undefined,
  document: ValidDocument,
  confinement: ConfinementOptions,
  positions: DocumentLocator,
): Promise<ManifestProblem[]> {
  const problems: ManifestProblem[] = [];
  for (const field of kind?.localFiles ?? []) {
    const reference = document.spec?.[field];
    if (typeof reference !== 'string') continue;
    const confined = await confine(confinement, reference);
    if (confined.ok || ('notFound' in confined && confined.notFound)) continue;
    problems.push({
      position: positions.locate(`/spec/${field}`),
      message: `spec.${field}: ${reference} ${confined.reason}`,
    });
  }
  return problems;
}

/**
 * Records who a document with problems declares (a schema error, or a reference `${env:}` or
 * `${file:}` that cannot be filled in), so the checks across documents still count it: a copy of
 * another document is said to be declared twice in the same run as its other problems, not only once
 * they are fixed. Its identity does not depend on its spec; one read from a value whose reference
 * failed (`failedPointers`, through aliases too) is not known, and the document is left out.
 */
export function noteUnloaded(
  value: unknown,
  positions: DocumentLocator,
  kinds: readonly ManifestKind[],
  manifest: Manifest,
  failedPointers: ReadonlySet<string> = NO_POINTERS,
): void {
  const key = identityOf(value, kinds, failedPointers);
  if (!key) return;
  (manifest.unloaded ??= []).push({
    key,
    source: positions.documentStart(),
    // Its connection is checked with the rest: "not declared" waited for the other fixes.
    ...(key.connection !== undefined ? { connectionAt: positions.locate('/metadata/connection') } : {}),
  });
}

const NO_POINTERS: ReadonlySet<string> = new Set();

/**
 * Who a document with problems declares, when its kind and metadata say so plainly (a known kind,
 * string name, namespace and connection, none of them from a reference that failed), for the
 * duplicate check; undefined otherwise.
 */
function identityOf(
  value: unknown,
  kinds: readonly ManifestKind[],
  failedPointers: ReadonlySet<string>,
): ResourceKey | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { kind: kindName, metadata } = value as { kind?: unknown; metadata?: unknown };
  const kind = kinds.find((k) => k.kind === kindName);
  if (!kind || typeof metadata !== 'object' || metadata === null) return undefined;
  const namespaceField = namespaceFieldOf(kind);
  if (
    ['/metadata/name', `/metadata/${namespaceField}`, '/metadata/connection'].some((pointer) =>
      isUnderAny(pointer, failedPointers),
    )
  )
    return undefined;
  const fields = metadata as Record<string, unknown>;
  const namespace = fields[namespaceField];
  const { name, connection } = fields;
  if (typeof name !== 'string' || name === '') return undefined;
  if (namespace !== undefined && typeof namespace !== 'string') return undefined;
  if (connection !== undefined && typeof connection !== 'string') return undefined;
  return {
    kind: kind.kind,
    name,
    ...(namespace !== undefined ? { namespace } : {}),
    ...(connection !== undefined ? { connection } : {}),
  };
}
