/**
 * The steps every front end takes: load and validate the manifest, connect to its services (once per
 * run), plan against live state, apply the plan. Loading and planning write nothing to a service.
 */
import { sensitiveEnvFrom } from '../common/allow-list.js';
import { type SettingNames, settingNames } from '../common/setting-names.js';
import type { ApplyEvent, ApplyResult, ChangeResult } from '../applier/applier.js';
import { applyPlan } from '../applier/applier.js';
import type { RunHttpOptions } from '../clients/service.js';
import { type Manifest, ManifestError } from '../manifest/types.js';
import { buildPlan } from '../planner/planner.js';
import type { Change, Plan } from '../planner/types.js';
import type { WriteOnlyDigests } from '../planner/write-only.js';
import { addressOf, type Desired, isPrunable, type ResourceKey } from '../resources/contract.js';
import type { Catalog } from './catalog.js';
import { ServiceConnections } from './connections.js';
import { keyedDesired } from './desired.js';
import { type DeletionLimits, deletionProblems } from './deletion-guards.js';
import { sameObjectProblems } from './same-object.js';
import {
  type AppliedObject,
  type InventoryLockOptions,
  LocalInventory,
  type ManagedObjects,
} from './inventory.js';
import { InventoryNotSavedError } from './errors.js';
import { inventoryFromEnv } from './inventory-backend.js';
import {
  missingOwned,
  ownedOnUndeclaredConnection,
  ownedOutOfScope,
  ownedOutsidePruneScopes,
} from './missing-owned.js';
import { ownedOrigin } from './inventory-document.js';
import { pruneScopes } from './prune-scopes.js';
import { defaultCatalog } from './services.js';
import { selectTargets, type TargetPatterns } from './targeting.js';

import {
  type EngineOptions,
  keyedObjects,
  type LoadOptions,
  loadManifest,
  refuseLocalFileProblems,
} from './validate.js';

export {
  type EngineOptions,
  type LoadOptions,
  loadManifest,
  type ManifestAccess,
  validate,
  type ValidManifest,
} from './validate.js';

export interface ConnectOptions extends EngineOptions {
  /** Aborts every request of the run and every wait (rate limit, retry). */
  signal?: AbortSignal;
  /** Kind options switched on (`force-unlock`). */
  options?: readonly string[];
  /** HTTP behaviour for every client of the run: see `httpOptions` (timeouts, retry reporting). */
  http?: RunHttpOptions;
}

/**
 * An address as written, and its origin and host as a client's message names them. Not a bare
 * one-word host (`http://localhost`, `https://vault`): that is also a word of names and messages
 * (`localhost-proxy`), which would be redacted from every error of the run.
 */
function addressForms(address: string): string[] {
  try {
    const url = new URL(address);
    const host = url.port !== '' || url.hostname.includes('.') ? [url.host] : [];
    return [...new Set([address, url.origin, ...host])];
  } catch {
    return [address];
  }
}

/**
 * The run's connections to the services the manifest uses: from the environment, or from the
 * manifest's Connections. Clients are made on first use, so a manifest that uses one service needs
 * only that service's variables. Close it when the run ends.
 */
export function connect(manifest: Manifest | undefined, options: ConnectOptions = {}): ServiceConnections {
  const { catalog = defaultCatalog, env = process.env } = options;
  // The manifest's values from sensitive variables are scrubbed from every request's errors, as the
  // token is, before a service's message is cut to length.
  // So is an address read from a variable or file, which no message quotes (a variable named
  // anything may hold an address with a path or host that is not for every reader): as written,
  // and as the client names it (its origin, its host).
  const sensitive = [
    ...(manifest?.sensitiveValues ?? []),
    ...(manifest?.connections ?? [])
      .filter((c) => c.addressFromOutside)
      .flatMap((c) => addressForms(c.address)),
  ];
  const http =
    sensitive.length > 0
      ? { ...options.http, secrets: [...(options.http?.secrets ?? []), ...sensitive] }
      : options.http;
  return new ServiceConnections(env, catalog.definitions, manifest?.connections ?? [], {
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.options ? { options: options.options } : {}),
    ...(http ? { http } : {}),
  });
}

/**
 * The manifest's objects with complete keys: each one's effective namespace is filled in from its
 * connection's settings (read without contacting the service), and an object declared twice, however
 * each document spells its namespace, is a `ManifestError`.
 */
export function desiredObjects(
  manifest: Manifest,
  connections: ServiceConnections,
  catalog: Catalog = defaultCatalog,
): Desired[] {
  return keyedDesired(manifest, catalog, (s, c) => connections.settings(s, c));
}

export interface PlanRunOptions extends LoadOptions, ConnectOptions {
  /** How many reads may be in flight at once (default 10). */
  parallelism?: number;
  /** Also plan deletions of owned objects the manifest no longer declares (`--prune`). */
  prune?: boolean;
  /** Called as reads finish, for progress output. */
  onProgress?: (done: number, total: number) => void;
  /** What Converge last applied to write-only attributes (the inventory). */
  writeOnly?: WriteOnlyDigests;
  /** Plan over these connections (made with `connect`) instead of making the run's own. */
  connections?: ServiceConnections;
  /** `--target`: address globs; only those objects and what they need are planned. */
  targets?: readonly string[];
  /** `--exclude`: address globs left out, with whatever needs them. */
  excludes?: readonly string[];
  /**
   * The objects Converge manages (the inventory's `objects`): with `prune`, kinds without an
   * ownership marker delete exactly those Converge created that the manifest no longer declares.
   */
  managed?: Pick<ManagedObjects, 'entries' | 'storedIn' | 'absent'>;
  /** `--allow-empty` and `--max-deletes`: see `DeletionLimits`. */
  limits?: DeletionLimits;
}

/** A planned run: the manifest, its objects, the plan, and the connections to apply it over. */
export interface PlanRun {
  manifest: Manifest;
  desired: Desired[];
  plan: Plan;
  /** The run's one set of connections; `apply` reuses it. The caller closes it. */
  connections: ServiceConnections;
}

/**
 * Plans a manifest (paths to load, or one already loaded) against live state. Writes nothing to any
 * service. On success the caller owns `connections` and closes it; on failure they are closed here.
 */
export async function plan(
  source: readonly string[] | Manifest,
  options: PlanRunOptions = {},
): Promise<PlanRun> {
  const catalog = options.catalog ?? defaultCatalog;
  const manifest = isManifest(source) ? source : await loadManifest(source, options);
  const connections = options.connections ?? connect(manifest, options);
  try {
    const desired = await plannableObjects(manifest, connections, catalog, options.managed?.storedIn);
    const names = settingNames(options.settingNames);
    const selection = selectTargets(
      desired,
      catalog.kind,
      {
        ...(options.targets ? { targets: options.targets } : {}),
        ...(options.excludes ? { excludes: options.excludes } : {}),
      },
      names,
    );
    // Without prune, every pattern must match a declared object; with it, it may name one to delete.
    if (!options.prune) selection.requireMatches();
    const candidates: string[] = [];
    const pruneOnly = (address: string) => {
      candidates.push(address);
      return selection.covers(address);
    };
    const recorded = options.managed?.entries() ?? [];
    const allOwned = recorded.filter(([, e]) => e.owned);
    // Records on a connection the manifest no longer declares have no address or token to be read
    // with: they stay out of every prune scope (a scope there failed the plan on its first request)
    // and are listed as not pruned below.
    const unreachable = options.prune
      ? ownedOnUndeclaredConnection(allOwned, manifest.connections, catalog)
      : [];
    const unreachableAddresses = new Set(unreachable.map((u) => u.address));
    const owned = allOwned.filter(([address]) => !unreachableAddresses.has(address));
    // A scope of a kind no target can name is not even listed: fewer requests for a narrow target.
    // The kinds left unlisted are named in the plan: their deletions were not looked for.
    const allScopes = options.prune
      ? pruneScopes(
          manifest,
          desired,
          catalog,
          (s, c) => connections.settings(s, c),
          owned.map(([, e]) => ({ key: e.key, imported: ownedOrigin(e) === 'imported' })),
        )
      : undefined;
    const prune = allScopes?.filter((scope) => selection.touchesKind(scope.kind));
    const unlistedKinds = [
      ...new Set((allScopes ?? []).filter((s) => !selection.touchesKind(s.kind)).map((s) => s.kind)),
    ].sort();
    const planned = await buildPlan(selection.desired, catalog.kind, connections, {
      parallelism: options.parallelism ?? 10,
      ...(selection.targeting ? { declared: desired, pruneOnly } : {}),
      ...(prune ? { prune } : {}),
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
      ...(options.writeOnly ? { writeOnly: options.writeOnly } : {}),
      settingNames: names,
      ...(manifest.sensitiveValues ? { sensitiveValues: manifest.sensitiveValues } : {}),
      // The run's tokens a service showed in an answer: masked wherever the plan shows them.
      credentials: () => connections.echoedCredentials(),
      secretName: sensitiveEnvFrom((options.env ?? process.env).CONVERGE_SENSITIVE_ENV).allows,
      ...(options.managed
        ? {
            managed: new Map(owned.map(([address, e]) => [address, ownedOrigin(e)] as const)),
            managedIds: new Map(owned.flatMap(([address, e]) => (e.id ? [[address, e.id] as const] : []))),
            notOwned: new Set(recorded.filter(([, e]) => !e.owned).map(([address]) => address)),
          }
        : {}),
    });
    planned.problems.push(...deletionProblems(planned, desired, options.limits ?? {}, names, prune ?? []));
    planned.problems.push(...sameObjectProblems(planned, catalog, connections.addresses()));
    // What the prune leaves of the inventory's own objects (not found, not pruned), kept to what the
    // patterns cover, as its deletions are. Any pattern used to drop both lists, so `--target 'Job/**'`
    // said "No changes" of a job it named, left out of reach on another connection.
    const leftByPrune: string[] = [];
    if (allScopes && prune) {
      const declared = new Set(desired.map((d) => addressOf(d.key)));
      // A targeted plan leaves out the live objects the patterns do not cover: found all the same.
      const found = new Set([...declared, ...candidates]);
      const missing = missingOwned(owned, prune, found, planned, catalog);
      // Out of every scope, of every kind: one in a scope of a kind left unlisted is not out of it.
      const outOfScope = ownedOutOfScope(owned, allScopes, declared, planned, catalog);
      const outsideDeclared = ownedOutsidePruneScopes(owned, allScopes, declared, planned, catalog);
      leftByPrune.push(...missing, ...outOfScope, ...outsideDeclared);
      const shownMissing = missing.filter(selection.covers);
      if (shownMissing.length > 0) planned.missingOwned = shownMissing;
      const shownOutOfScope = outOfScope.filter(selection.covers);
      if (shownOutOfScope.length > 0) planned.ownedOutOfScope = shownOutOfScope;
      const shownOutside = outsideDeclared.filter(selection.covers);
      if (shownOutside.length > 0) planned.ownedOutsidePruneScopes = shownOutside;
      // One the inventory records under another id is "Not found" (someone else's, made since under
      // the name): not listed a second time as marked but not recorded.
      const missingHere = new Set(missing);
      const marked = (planned.markedNotRecorded ?? []).filter((a) => !missingHere.has(a));
      leftByPrune.push(...marked);
      const shownMarked = marked.filter(selection.covers);
      if (shownMarked.length > 0) planned.markedNotRecorded = shownMarked;
      else delete planned.markedNotRecorded;
      const refused = planned.pruneRefused ?? [];
      leftByPrune.push(...refused);
      const shownRefused = refused.filter(selection.covers);
      if (shownRefused.length > 0) planned.pruneRefused = shownRefused;
      else delete planned.pruneRefused;
    }
    // A plan token that may not see the inventory's workspace read none: the prune then finds nothing
    // Converge made, which must not read as "nothing to delete".
    if (options.prune && options.managed?.absent) planned.inventoryAbsent = options.managed.absent;
    // Without --prune, the inventory's objects whose documents are gone are said, not deleted: a
    // reviewer read "No changes" of a pull request that removed some as nothing left behind.
    // Those of a kind --prune never deletes (an LdapConfig) are said with --prune too: its plan lists
    // them neither to prune nor as left, and a pull request that dropped one read as nothing.
    if (options.managed) {
      const declared = new Set(desired.map((d) => addressOf(d.key)));
      const undeclared = allOwned
        .filter(([address]) => !declared.has(address) && selection.covers(address))
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      // "Plan with --prune to delete them" is not true of a kind the prune never deletes.
      const prunable = ([, entry]: (typeof undeclared)[number]) => isPrunable(catalog.kind(entry.kind));
      const toPrune = undeclared.filter(prunable).map(([address]) => address);
      const neverPruned = undeclared.filter((e) => !prunable(e)).map(([address]) => address);
      if (!options.prune && toPrune.length > 0) planned.ownedNotDeclared = toPrune;
      if (neverPruned.length > 0) planned.ownedNotDeclaredNeverPruned = neverPruned;
    }
    // Listed in a targeted plan too, where the patterns cover them: a target naming them must not
    // read as "nothing to delete". Patterns that leave them out leave them out silently.
    const notReached = unreachable.filter((u) => selection.covers(u.address));
    if (notReached.length > 0) planned.ownedOnUndeclaredConnection = notReached;
    // A pattern may name what the prune lists, as the plan prints it: a deletion, or an object of the
    // inventory it leaves (not found, not pruned, on a connection no longer declared); an --exclude
    // of one too, which then hides it.
    if (options.prune) selection.requireMatches([...candidates, ...leftByPrune, ...unreachableAddresses]);
    planned.requests = connections.requestCounts();
    if (selection.targeting) {
      const leftOut = candidates.filter((address) => !selection.covers(address));
      planned.targeting = {
        ...selection.targeting,
        ...(leftOut.length > 0 ? { pruneLeftOut: [...new Set(leftOut)].sort() } : {}),
        ...(unlistedKinds.length > 0 ? { pruneKindsNotListed: unlistedKinds } : {}),
      };
    }
    return { manifest, desired, plan: planned, connections };
  } catch (error) {
    await connections.close();
    throw error;
  }
}

/**
 * The manifest's objects with complete keys, or what `plan` refuses of them before it reads anything:
 * keying's problems (an object declared twice however each document spells its namespace, a
 * workspace with no organization) with those of the files objects name, as validate refuses them,
 * and the inventory's own workspace declared (`storedIn`). Reads no inventory and asks no service
 * (the connections' settings only), so an apply checks it before it takes the inventory's lock: a
 * manifest refused then writes nothing, neither a `.converge/` folder nor a workspace inventory.
 */
export async function plannableObjects(
  manifest: Manifest,
  connections: ServiceConnections,
  catalog: Catalog = defaultCatalog,
  storedIn?: ResourceKey,
): Promise<Desired[]> {
  const desired = await keyedObjects(
    manifest,
    catalog,
    (s, c) => connections.settings(s, c),
    'with-problems',
  );
  refuseInventoryHome(desired, storedIn);
  return desired;
}

/**
 * What an apply refuses before it takes the inventory's lock: `plannableObjects`, and the files the
 * objects it will plan name (a job's specFile, a workspace's state), read as validate reads them. Only
 * those `patterns` select: an object `--target` leaves out is not planned, so its file is not read
 * (a saved plan of other objects stays appliable while that file is missing). The plan reads them
 * again as it plans.
 */
export async function checkBeforeLock(
  manifest: Manifest,
  connections: ServiceConnections,
  catalog: Catalog,
  storedIn: ResourceKey | undefined,
  patterns: TargetPatterns,
  names?: Partial<SettingNames>,
): Promise<void> {
  const desired = await plannableObjects(manifest, connections, catalog, storedIn);
  const selected = selectTargets(desired, catalog.kind, patterns, settingNames(names)).desired;
  await refuseLocalFileProblems(selected, catalog, manifest);
}

/**
 * The workspace that holds the inventory may not be an object of the manifest that uses it: a change
 * to it (a lock, a deletion) acts on the records and the lock of the very run applying it, and one
 * pull request deleting it wiped what every runner shares. Refused before anything is read.
 */
function refuseInventoryHome(desired: readonly Desired[], home: ResourceKey | undefined): void {
  if (!home) return;
  const address = addressOf(home);
  const declared = desired.filter(
    (d) => d.key.connection === undefined && d.key.kind === home.kind && addressOf(d.key) === address,
  );
  if (declared.length === 0) return;
  throw new ManifestError(
    declared.map((d) => ({
      position: d.resource?.source ?? { file: '(manifest)', line: 1, col: 1 },
      message: `${address} holds Converge's inventory (CONVERGE_INVENTORY): the manifest that uses the inventory cannot also manage its workspace (a lock or a deletion would act on the records of the run applying it); take it out of the manifest`,
    })),
  );
}

function isManifest(source: readonly string[] | Manifest): source is Manifest {
  return !Array.isArray(source);
}

/** Where write-only digests are kept across runs and saved after an apply (the `LocalInventory`). */
export interface SavedDigests extends WriteOnlyDigests {
  save(): void | Promise<void>;
  /** Records what the apply created, updated and deleted (see `LocalInventory.recordApplied`). */
  recordApplied?(applied: readonly AppliedObject[]): void;
  /** Whether an object has a record (an entry of any kind). */
  isRecorded?(address: string): boolean;
}

export interface ApplyRunOptions {
  /** The services and kinds the plan was made with; default: `defaultCatalog`. */
  catalog?: Catalog;
  /** How many changes may run at once (default 10). */
  parallelism?: number;
  /** Re-read each object first and refuse those that moved since the plan (a saved plan). */
  checkStale?: boolean;
  /** Progress: each change as it starts and ends. */
  onEvent?: (event: ApplyEvent) => void;
  /** The inventory: digests of write-only values are recorded in it, and it is saved afterwards. */
  inventory?: SavedDigests;
  /** Once aborted, no further change starts; those in flight finish (see `ApplyOptions.stop`): an
   * interrupt, or a reconcile loop stopping. */
  stop?: AbortSignal;
}

/**
 * Applies a plan over the connections it was made with: creates and updates in dependency order,
 * deletions after, as many at once as `parallelism` allows. A failed change skips those depending on
 * it; the result says, for each change, what happened.
 */
export async function apply(
  run: Pick<PlanRun, 'plan' | 'connections'>,
  options: ApplyRunOptions = {},
): Promise<ApplyResult> {
  const catalog = options.catalog ?? defaultCatalog;
  const inventory = options.inventory;
  // Each change is recorded as it lands, not once all have: a process quitting at once (a second
  // Ctrl-C) can then still save what it made (`LocalInventory.saveNow`).
  const record = (result: ChangeResult, change: Change) => {
    const landed = result.status === 'applied' || (result.status === 'failed' && result.mayHaveLanded);
    if (!landed || result.action === 'noop') return;
    inventory?.recordApplied?.([
      {
        address: result.address,
        key: change.key,
        action: result.action,
        ...(result.id !== undefined ? { id: result.id } : {}),
      },
    ]);
  };
  // A create under way may have landed already (a workspace made, its state still being pushed):
  // it is recorded as it starts, so that a process quitting at once (a second Ctrl-C) keeps it within
  // prune's reach; the record is dropped again if the create ends without landing. A record of an
  // object that is not there is named by the next plan, with the command that drops it.
  const provisional = new Set<string>();
  const started = (change: Change) => {
    if (change.action !== 'create' || !inventory?.recordApplied || !inventory.isRecorded) return;
    if (inventory.isRecorded(change.address)) return;
    inventory.recordApplied([{ address: change.address, key: change.key, action: 'create' }]);
    provisional.add(change.address);
  };
  const finished = (result: ChangeResult, change: Change) => {
    const wasProvisional = provisional.delete(change.address);
    const landed = result.status === 'applied' || (result.status === 'failed' && result.mayHaveLanded);
    if (wasProvisional && !landed) inventory?.forget(change.address);
    record(result, change);
  };
  const onEvent = options.onEvent;
  const result = await applyPlan(run.plan, catalog.kind, run.connections, {
    parallelism: options.parallelism ?? 10,
    ...(options.checkStale ? { checkStale: true } : {}),
    onEvent: (event) => {
      if (event.type === 'start') started(event.change);
      if (event.type === 'finish' && event.result) finished(event.result, event.change);
      onEvent?.(event);
    },
    ...(inventory ? { writeOnly: inventory } : {}),
    ...(options.stop ? { stop: options.stop } : {}),
  });
  try {
    await inventory?.save();
  } catch (error) {
    throw new InventoryNotSavedError(result, error);
  }
  return result;
}

export interface InventoryLockRunOptions extends InventoryLockOptions {
  /** The inventory to lock; default: the one `CONVERGE_INVENTORY` names (see `inventoryFromEnv`). */
  inventory?: LocalInventory;
  env?: NodeJS.ProcessEnv;
}

/** An inventory read under its lock, for one apply (or one reconcile cycle). */
export interface LockedInventory {
  inventory: LocalInventory;
  /** Releases the lock (and closes the backend's connection); safe to call more than once. */
  release(): Promise<void>;
}

/**
 * Takes the inventory's lock (the local apply lock, or the workspace's lock with a reason naming the
 * run), then reads the inventory, so planning sees what the last holder saved. Waits up to
 * `timeoutMs` for another holder, never steals. Call `release` on every path: after the apply, after
 * an error, after an interrupt.
 */
export async function lockInventory(options: InventoryLockRunOptions): Promise<LockedInventory> {
  const inventory = options.inventory ?? inventoryFromEnv(options.env ?? process.env);
  let lock: { release(): Promise<void> };
  try {
    lock = await inventory.lock(options);
  } catch (error) {
    await inventory.close();
    throw error;
  }
  let released = false;
  const release = async () => {
    if (released) return;
    released = true;
    try {
      await lock.release();
    } finally {
      await inventory.close();
    }
  };
  try {
    await inventory.open();
  } catch (error) {
    await release();
    throw error;
  }
  return { inventory, release };
}
