/**
 * The steps `plan` and `apply` share: load and validate the manifest, turn it into desired objects,
 * and plan against live state. Nothing here is written to a service.
 */
import { loadManifest } from '../manifest/index.js';
import type { Manifest, ManifestResource } from '../manifest/types.js';
import { buildPlan } from '../planner/planner.js';
import type { Plan } from '../planner/types.js';
import type { Desired, PruneScope } from '../resources/contract.js';
import { kindByName, kinds } from '../resources/index.js';
import { ServiceConnections } from './connections.js';
import { CliError } from './exit-codes.js';

export function desiredOf(resource: ManifestResource): Desired {
  return {
    key: {
      kind: resource.kind,
      name: resource.name,
      ...(resource.namespace !== undefined ? { namespace: resource.namespace } : {}),
      ...(resource.connection !== undefined ? { connection: resource.connection } : {}),
    },
    spec: resource.spec,
    resource,
    ...(resource.ensure === 'absent' ? { ensure: 'absent' as const } : {}),
  };
}

/**
 * Refuses a command run without -f in words that say which flag is missing; the loader's own
 * problem for an empty path list reads as a manifest error at ".".
 */
export function requireManifestPaths(paths: readonly string[]): void {
  if (paths.length === 0) throw new CliError('no manifest given: pass -f FILE or -f FOLDER');
}

export async function loadDesired(
  paths: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ manifest: Manifest; desired: Desired[] }> {
  requireManifestPaths(paths);
  const manifest = await loadManifest(paths, { kinds, env });
  return { manifest, desired: manifest.resources.map(desiredOf) };
}

export interface PlanRun {
  manifest: Manifest;
  plan: Plan;
  connections: ServiceConnections;
}

/**
 * Prune scopes: every (kind, connection, namespace) the manifest manages, for kinds whose service
 * carries Converge's ownership marker. An empty manifest has no scope, so it can never prune
 * everything. Kinds without a marker are pruned only in scopes the manifest declares.
 */
export function pruneScopes(manifest: Manifest, desired: readonly Desired[]): PruneScope[] {
  const seen = new Map<string, PruneScope>();
  for (const p of manifest.pruneScopes) {
    const scope: PruneScope = {
      kind: p.kind,
      name: p.name,
      position: p.source,
      ...(p.namespace !== undefined ? { namespace: p.namespace } : {}),
      ...(p.connection !== undefined ? { connection: p.connection } : {}),
      ...(p.namePrefix !== undefined ? { namePrefix: p.namePrefix } : {}),
      ...(p.allowEmpty ? { allowEmpty: true } : {}),
    };
    seen.set(`declared:${p.name}`, scope);
  }
  for (const d of desired) {
    const kind = kindByName(d.key.kind);
    if (kind?.ownership !== 'marker' || !kind.owns || !kind.list) continue;
    const scope: PruneScope = {
      kind: d.key.kind,
      ...(d.key.namespace !== undefined ? { namespace: d.key.namespace } : {}),
      ...(d.key.connection !== undefined ? { connection: d.key.connection } : {}),
    };
    seen.set(JSON.stringify(scope), scope);
  }
  return [...seen.values()];
}

export async function planManifest(
  paths: string[],
  options: {
    env: NodeJS.ProcessEnv;
    parallelism: number;
    prune: boolean;
    onProgress?: (done: number, total: number) => void;
    signal?: AbortSignal;
    forceUnlock?: boolean;
  },
): Promise<PlanRun> {
  const { manifest, desired } = await loadDesired(paths, options.env);
  const connections = new ServiceConnections(options.env, manifest.connections, {
    ...(options.signal ? { signal: options.signal } : {}),
    flags: { forceUnlock: Boolean(options.forceUnlock) },
  });
  try {
    const plan = await buildPlan(desired, kindByName, connections, {
      parallelism: options.parallelism,
      ...(options.prune ? { prune: pruneScopes(manifest, desired) } : {}),
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
    });
    plan.requests = connections.requestCounts();
    return { manifest, plan, connections };
  } catch (error) {
    await connections.close();
    throw error;
  }
}
