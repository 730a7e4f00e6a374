/**
 * The steps `validate`, `plan` and `apply` share: load and validate the manifest, turn it into
 * desired objects with complete keys, and plan against live state. Nothing here is written to a
 * service.
 */
import { allowListFrom } from '../common/allow-list.js';
import { loadManifest } from '../manifest/index.js';
import {
  formatPosition,
  type Manifest,
  ManifestError,
  type ManifestProblem,
  type ManifestResource,
} from '../manifest/types.js';
import { buildPlan } from '../planner/planner.js';
import type { Plan } from '../planner/types.js';
import type { WriteOnlyDigests } from '../planner/write-only.js';
import { addressOf, type ConnectionSettings, type Desired, type PruneScope } from '../resources/contract.js';
import type { Catalog } from './catalog.js';
import { type RunOptions, ServiceConnections } from './connections.js';
import { connectionAddressProblems } from './connection-addresses.js';
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

type SettingsOf = (service: string, connection?: string) => ConnectionSettings;

/**
 * Desired objects with their effective namespace filled in (a role without one is in `default`, a
 * workspace in the connection's organization), so that two documents for one object are caught
 * however each spells its namespace, and plans, saved plans and prune compare like with like.
 */
export function keyedDesired(manifest: Manifest, catalog: Catalog, settingsOf: SettingsOf): Desired[] {
  const problems: ManifestProblem[] = [];
  const first = new Map<string, ManifestResource>();
  const desired: Desired[] = [];
  for (const resource of manifest.resources) {
    const d = desiredOf(resource);
    const kind = catalog.kind(d.key.kind);
    if (kind?.effectiveNamespace && d.key.namespace === undefined) {
      try {
        d.key = {
          ...d.key,
          namespace: kind.effectiveNamespace(d.key, settingsOf(kind.service, d.key.connection)),
        };
      } catch (error) {
        problems.push({ position: resource.source, message: (error as Error).message });
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
    desired.push(d);
  }
  if (problems.length > 0) throw new ManifestError(problems);
  return desired;
}

/** What the operator exposes to the manifest from outside it (flags of validate, plan and apply). */
export interface ManifestAccess {
  /** `--allow-env`, beside CONVERGE_ALLOW_ENV: the variables `${env:NAME}` may read. */
  allowEnv?: readonly string[];
  /** `--allow-address`: where a Connection may send a token from outside the manifest. */
  allowAddresses?: readonly string[];
}

export async function loadDesired(
  paths: string[],
  env: NodeJS.ProcessEnv,
  catalog: Catalog,
  access: ManifestAccess = {},
): Promise<{ manifest: Manifest; desired: Desired[] }> {
  if (paths.length === 0) throw new CliError('no manifest given: pass -f FILE or -f FOLDER');
  const manifest = await loadManifest(paths, {
    kinds: catalog.kinds,
    services: catalog.manifestServices,
    env,
    allowEnv: allowListFrom(env.CONVERGE_ALLOW_ENV, access.allowEnv),
  });
  const untrusted = connectionAddressProblems(
    manifest.connections,
    catalog.definitions,
    env,
    access.allowAddresses,
  );
  if (untrusted.length > 0) throw new ManifestError(untrusted);
  // Settings only: no client is created and no service contacted.
  const settings = new ServiceConnections(env, catalog.definitions, manifest.connections);
  return { manifest, desired: keyedDesired(manifest, catalog, (s, c) => settings.settings(s, c)) };
}

export interface PlanRun {
  manifest: Manifest;
  plan: Plan;
  connections: ServiceConnections;
}

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
    if (namespace === undefined && kind?.effectiveNamespace) {
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
  catalog: Catalog,
  options: {
    env: NodeJS.ProcessEnv;
    parallelism: number;
    prune: boolean;
    onProgress?: (done: number, total: number) => void;
    writeOnly?: WriteOnlyDigests;
  } & RunOptions &
    ManifestAccess,
): Promise<PlanRun> {
  const { manifest, desired } = await loadDesired(paths, options.env, catalog, options);
  const connections = new ServiceConnections(options.env, catalog.definitions, manifest.connections, {
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.options ? { options: options.options } : {}),
    ...(options.http ? { http: options.http } : {}),
  });
  try {
    const prune = options.prune
      ? pruneScopes(manifest, desired, catalog, (s, c) => connections.settings(s, c))
      : undefined;
    const plan = await buildPlan(desired, catalog.kind, connections, {
      parallelism: options.parallelism,
      ...(prune ? { prune } : {}),
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
      ...(options.writeOnly ? { writeOnly: options.writeOnly } : {}),
    });
    plan.requests = connections.requestCounts();
    return { manifest, plan, connections };
  } catch (error) {
    await connections.close();
    throw error;
  }
}
