/**
 * Checks that need every document at once: the same object declared twice (in one file or across
 * files), and `metadata.connection` naming a Connection that exists and reaches the kind's service.
 */
import { addressOf, isNamespaced, type ResourceKey } from '../resources/contract.js';
import { editDistance } from '../common/edit-distance.js';
import { inFileOrder } from '../common/file-order.js';
import type { ManifestKind } from './kinds.js';
import { formatPosition, type Manifest, type ManifestProblem, type SourcePosition } from './types.js';

/**
 * Runs on the documents that passed validation. `brokenConnections` names Connection documents that
 * did not: a reference to one of them is not reported, the document's own problems are.
 */
export function crossCheck(
  manifest: Manifest,
  kinds: readonly ManifestKind[],
  brokenConnections: ReadonlySet<string>,
): ManifestProblem[] {
  return [
    ...findDuplicates(manifest, kinds),
    ...checkConnectionReferences(manifest, kinds, brokenConnections),
    ...checkPruneScopes(manifest, kinds, brokenConnections),
  ];
}

/** The kind `name` is most likely a typo of (`AclRoles`, `ldapgroup`), if any is close enough. */
function likelyKind(name: string, known: readonly string[]): string | undefined {
  const lower = name.toLowerCase();
  let best: { kind: string; distance: number } | undefined;
  for (const kind of known) {
    const distance = editDistance(lower, kind.toLowerCase());
    if (!best || distance < best.distance) best = { kind, distance };
  }
  return best && best.distance <= Math.max(2, Math.floor(best.kind.length / 3)) ? best.kind : undefined;
}

/** A prune scope must name a kind that can be pruned, and a connection of that kind's service. */
function checkPruneScopes(
  manifest: Manifest,
  kinds: readonly ManifestKind[],
  brokenConnections: ReadonlySet<string>,
): ManifestProblem[] {
  const problems: ManifestProblem[] = [];
  for (const scope of manifest.pruneScopes) {
    const kind = kinds.find((k) => k.kind === scope.kind);
    if (!kind) {
      const known = kinds.map((k) => k.kind);
      const guess = likelyKind(scope.kind, known);
      problems.push({
        position: scope.source,
        message: `PruneScope "${scope.name}" names unknown kind "${scope.kind}"${guess ? `; did you mean "${guess}"?` : ''} (known kinds: ${known.join(', ')})`,
      });
      continue;
    }
    if (!kind.ownership) {
      problems.push({
        position: scope.source,
        message: `PruneScope "${scope.name}": ${scope.kind} objects cannot be pruned`,
      });
    }
    if (scope.namespace !== undefined && !isNamespaced(kind)) {
      problems.push({
        position: scope.source,
        message: `PruneScope "${scope.name}": ${scope.kind} objects have no namespace`,
      });
    }
    if (scope.connection !== undefined && !brokenConnections.has(scope.connection)) {
      const connection = manifest.connections.find((c) => c.name === scope.connection);
      if (!connection || connection.service !== kind.service) {
        problems.push({
          position: scope.source,
          message: `PruneScope "${scope.name}": no ${kind.service} connection named "${scope.connection}" is declared`,
        });
      }
    }
  }
  return problems;
}

/**
 * An object's identity is kind + namespace + name, plus the connection it lives on: the same role
 * name on two registry clusters is two objects. A missing namespace is one namespace of its own.
 */
/**
 * The address the plan prints for an object: its namespace filled in where the kind has one without
 * any setting (a role's `default`), so that the message names what `--target` and `inventory show`
 * take. Where the namespace depends on a connection's settings (a workspace's organization), it is
 * left as written.
 */
function plannedAddress(key: ResourceKey, kinds: readonly ManifestKind[]): string {
  const kind = kinds.find((k) => k.kind === key.kind);
  if (key.namespace !== undefined || !kind?.effectiveNamespace) return addressOf(key);
  try {
    return addressOf({ ...key, namespace: kind.effectiveNamespace(key, {}) });
  } catch {
    return addressOf(key);
  }
}

function findDuplicates(manifest: Manifest, kinds: readonly ManifestKind[]): ManifestProblem[] {
  const listed: { key: ResourceKey; source: SourcePosition }[] = [
    ...manifest.connections.map((c) => ({ key: { kind: 'Connection', name: c.name }, source: c.source })),
    ...manifest.pruneScopes.map((p) => ({ key: { kind: 'PruneScope', name: p.name }, source: p.source })),
    ...manifest.resources.map((r) => ({
      key: { kind: r.kind, name: r.name, namespace: r.namespace, connection: r.connection },
      source: r.source,
    })),
  ];
  // Loaded objects are in file order already; documents with problems are put in their place.
  const declared = manifest.unloaded?.length
    ? inFileOrder([...listed, ...manifest.unloaded], (d) => d.source, manifest.files)
    : listed;
  const firstPlace = new Map<string, SourcePosition>();
  const problems: ManifestProblem[] = [];
  for (const { key, source } of declared) {
    const identity = JSON.stringify([key.kind, key.namespace ?? null, key.name, key.connection ?? null]);
    const first = firstPlace.get(identity);
    if (!first) {
      firstPlace.set(identity, source);
      continue;
    }
    problems.push({
      position: source,
      message: `${plannedAddress(key, kinds)} is declared twice: at ${formatPosition(first)} and at ${formatPosition(source)}`,
    });
  }
  return problems;
}

function checkConnectionReferences(
  manifest: Manifest,
  kinds: readonly ManifestKind[],
  brokenConnections: ReadonlySet<string>,
): ManifestProblem[] {
  const connections = new Map(manifest.connections.map((c) => [c.name, c]));
  const problems: ManifestProblem[] = [];
  // Documents with problems of their own are checked too, as far as their metadata says: every
  // problem in every file is reported at once, not the undeclared connection after the other fix.
  const referring = [
    ...manifest.resources.map((r) => ({
      kind: r.kind,
      connection: r.connection,
      at: () => r.locate('/metadata/connection'),
    })),
    ...(manifest.unloaded ?? []).map((u) => ({
      kind: u.key.kind,
      connection: u.key.connection,
      at: () => u.connectionAt ?? u.source,
    })),
  ];
  for (const resource of referring) {
    if (resource.connection === undefined || brokenConnections.has(resource.connection)) continue;
    const service = kinds.find((k) => k.kind === resource.kind)?.service;
    const connection = connections.get(resource.connection);
    const position = resource.at();
    if (!connection) {
      const candidates = manifest.connections.filter((c) => c.service === service).map((c) => `"${c.name}"`);
      const known =
        candidates.length > 0
          ? `declared ${service} connections: ${candidates.join(', ')}`
          : `no ${service} connection is declared`;
      problems.push({
        position,
        message: `connection "${resource.connection}" is not declared; add a Connection document with that name (${known})`,
      });
    } else if (connection.service !== service) {
      problems.push({
        position,
        message: `connection "${connection.name}" is a ${connection.service} connection, but ${resource.kind} needs a ${service} connection`,
      });
    }
  }
  return problems;
}
