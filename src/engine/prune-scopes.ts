/**
 * Where `--prune` may delete: derived from what the manifest manages and the PruneScopes it declares,
 * never wider, so deletion stays something the manifest and the operator both asked for.
 */
import { type Manifest, ManifestError, type ManifestProblem } from '../manifest/types.js';
import {
  type Desired,
  isNamespaced,
  isPrunable,
  type PruneScope,
  type ResourceKey,
} from '../resources/contract.js';
import type { Catalog } from './catalog.js';
import type { SettingsOf } from './desired.js';

/**
 * Prune scopes: every PruneScope the manifest declares (with its effective namespace), and, for
 * kinds whose service carries Converge's ownership marker and that no PruneScope names, every
 * (kind, connection, namespace) the manifest manages. An empty manifest has no marker scope, so it
 * can never prune everything that way.
 * Objects of such kinds adopted by import carry no marker: a scope of their own covers them alone
 * (`importedOnly`).
 * Kinds without a marker are pruned where the inventory holds objects Converge created (`owned`):
 * inside the scopes the manifest declares for the kind when it declares any, else wherever those
 * objects are; the planner then deletes only the inventory's objects. Emptying a whole kind is
 * refused by the engine's guard (`--allow-empty`), not per scope.
 */
export function pruneScopes(
  manifest: Manifest,
  desired: readonly Desired[],
  catalog: Catalog,
  settingsOf: SettingsOf,
  owned: readonly { key: ResourceKey; imported: boolean }[] = [],
): PruneScope[] {
  const seen = new Map<string, PruneScope>();
  const problems: ManifestProblem[] = [];
  for (const p of manifest.pruneScopes) {
    const kind = catalog.kind(p.kind);
    let namespace = p.namespace;
    if (namespace === undefined && isNamespaced(kind)) {
      try {
        namespace = kind.effectiveNamespace(
          {
            kind: p.kind,
            name: `(PruneScope ${p.name})`,
            ...(p.connection ? { connection: p.connection } : {}),
          },
          settingsOf(kind.service, p.connection),
        );
      } catch (error) {
        problems.push({ position: p.source, message: (error as Error).message });
        continue;
      }
    }
    const scope: PruneScope = {
      kind: p.kind,
      name: p.name,
      position: p.source,
      ...(namespace !== undefined ? { namespace } : {}),
      ...(p.connection !== undefined ? { connection: p.connection } : {}),
      ...(p.namePrefix !== undefined ? { namePrefix: p.namePrefix } : {}),
      ...(p.allowEmpty ? { allowEmpty: true } : {}),
    };
    seen.set(`declared:${p.name}`, scope);
  }
  if (problems.length > 0) throw new ManifestError(problems);
  // A kind with PruneScopes of its own is pruned in those alone: adding the scopes its objects imply
  // (every namespace declared, no prefix) undid a `namePrefix`, and two manifests sharing an
  // organization, each told to keep to its prefix, pruned each other's workspaces and jobs.
  const declaredKinds = new Set(manifest.pruneScopes.map((p) => p.kind));
  for (const d of desired) {
    const kind = catalog.kind(d.key.kind);
    if (!isPrunable(kind) || kind.ownership !== 'marker' || declaredKinds.has(d.key.kind)) continue;
    const scope: PruneScope = {
      kind: d.key.kind,
      ...(d.key.namespace !== undefined ? { namespace: d.key.namespace } : {}),
      ...(d.key.connection !== undefined ? { connection: d.key.connection } : {}),
    };
    seen.set(JSON.stringify(scope), scope);
  }
  for (const { key, imported } of owned) {
    const kind = catalog.kind(key.kind);
    // Kinds with a marker are pruned where the manifest declares one; an object adopted by import
    // carries no marker and is found through the inventory, so its scope is listed too, for the
    // imported objects alone: one import had made every marked object of the organization (another
    // project's workspaces) a candidate once the manifest dropped the kind there.
    if (!isPrunable(kind) || declaredKinds.has(key.kind)) continue;
    if (kind.ownership !== 'declared-scope' && !imported) continue;
    const scope: PruneScope = {
      kind: key.kind,
      ...(key.namespace !== undefined ? { namespace: key.namespace } : {}),
      ...(key.connection !== undefined ? { connection: key.connection } : {}),
      allowEmpty: true,
      ...(kind.ownership === 'declared-scope' ? {} : { importedOnly: true }),
    };
    seen.set(JSON.stringify(scope), scope);
  }
  return [...seen.values()];
}
