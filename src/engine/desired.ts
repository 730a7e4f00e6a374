/**
 * The manifest's objects as the planner wants them: one Desired per document, with its effective
 * namespace filled in, and each object declared once.
 */
import { formatPosition, type Manifest, ManifestError, type ManifestProblem } from '../manifest/types.js';
import {
  addressOf,
  type ConnectionSettings,
  type Desired,
  isNamespaced,
  type ManifestResource,
  type ResourceKey,
} from '../resources/contract.js';
import type { Catalog } from './catalog.js';

/** A connection's settings without contacting its service: `ServiceConnections.settings`. */
export type SettingsOf = (service: string, connection?: string) => ConnectionSettings;

export function desiredOf(resource: ManifestResource): Desired {
  // Built by assignment: one per document (thousands in a large manifest), and the spreads of
  // optional fields cost more than the rest of keying together.
  const key: ResourceKey = { kind: resource.kind, name: resource.name };
  if (resource.namespace !== undefined) key.namespace = resource.namespace;
  if (resource.connection !== undefined) key.connection = resource.connection;
  const d: Desired = { key, spec: resource.spec, resource };
  if (resource.ensure === 'absent') d.ensure = 'absent';
  return d;
}

/**
 * Desired objects with their effective namespace filled in (a role without one is in `default`, a
 * workspace in the connection's organization), so that two documents for one object are caught
 * however each spells its namespace, and plans, saved plans and prune compare like with like.
 */
export function keyedDesired(manifest: Manifest, catalog: Catalog, settingsOf: SettingsOf): Desired[] {
  const { desired, problems } = keyDesired(manifest, catalog, settingsOf);
  if (problems.length > 0) throw new ManifestError(problems);
  return desired;
}

/**
 * `keyedDesired` without throwing: every document's Desired, in manifest order, with what keying
 * found wrong (an object declared twice, a namespace that cannot be filled in). A manifest with such
 * problems is refused anyway; its objects are still returned, a second declaration included and an
 * object without its effective namespace keyed as far as its kind can tell, so that what else can be
 * checked of them (the local files they name) is reported in the same run.
 */
export function keyDesired(
  manifest: Manifest,
  catalog: Catalog,
  settingsOf: SettingsOf,
): { desired: Desired[]; problems: ManifestProblem[] } {
  const problems: ManifestProblem[] = [];
  const first = new Map<string, ManifestResource>();
  const desired: Desired[] = [];
  for (const resource of manifest.resources) {
    const d = desiredOf(resource);
    desired.push(d);
    const kind = catalog.kind(d.key.kind);
    if (isNamespaced(kind) && d.key.namespace === undefined) {
      try {
        d.key.namespace = kind.effectiveNamespace(d.key, settingsOf(kind.service, d.key.connection));
      } catch (error) {
        problems.push({ position: resource.source, message: (error as Error).message });
        // Without its connection's settings (one not declared): what the kind says without any,
        // for a kind whose namespace does not depend on them (a job's `default`).
        try {
          d.key.namespace = kind.effectiveNamespace(d.key, {});
        } catch {
          // Left as written: the object cannot take part in the duplicate check.
        }
        continue;
      }
    }
    const address = addressOf(d.key);
    const earlier = first.get(address);
    if (earlier) {
      problems.push({
        position: resource.source,
        message: `${address} is declared twice: at ${formatPosition(earlier.source)} and here${
          earlier.namespace !== resource.namespace
            ? ' (one names the default namespace, the other leaves it out)'
            : ''
        }`,
      });
      continue;
    }
    first.set(address, resource);
  }
  return { desired, problems };
}
