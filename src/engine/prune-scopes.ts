/**
 * Where `--prune` may delete: derived from what the manifest manages and the PruneScopes it declares,
 * never wider, so deletion stays something the manifest and the operator both asked for.
 */
import { type Manifest, ManifestError, type ManifestProblem } from '../manifest/types.js';
import { type Desired, isNamespaced, isPrunable, type PruneScope } from '../resources/contract.js';
import type { Catalog } from './catalog.js';
import type { SettingsOf } from './desired.js';

/**
 * Prune scopes: every (kind, connection, namespace) the manifest manages, for kinds whose service
 * carries Converge's ownership marker, and every PruneScope it declares (with its effective
 * namespace). An empty manifest has no scope, so it can never prune everything. Kinds without a
 * marker are pruned only in scopes the manifest declares.
 */
export function pruneScopes(
  manifest: Manifest,
  desired: readonly Desired[],
  catalog: Catalog,
  settingsOf: SettingsOf,
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
  for (const d of desired) {
    const kind = catalog.kind(d.key.kind);
    if (!isPrunable(kind) || kind.ownership !== 'marker') continue;
    const scope: PruneScope = {
      kind: d.key.kind,
      ...(d.key.namespace !== undefined ? { namespace: d.key.namespace } : {}),
      ...(d.key.connection !== undefined ? { connection: d.key.connection } : {}),
    };
    seen.set(JSON.stringify(scope), scope);
  }
  return [...seen.values()];
}
