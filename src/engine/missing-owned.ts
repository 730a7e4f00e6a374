/**
 * Objects the inventory records as Converge's own that a `--prune` listing did not find live: someone
 * deleted them outside Converge. There is nothing left to delete, so the plan goes on; it only says
 * so, with the command that drops the stale record, so the inventory does not silently keep
 * addresses that no longer mean anything.
 *
 * Only objects inside a prune scope count: one outside every scope was simply not looked for. Of a
 * kind whose ownership is the inventory alone, an object the prune did not plan to delete is missing
 * (or is another, with another id). Of a kind with a marker, one the scope's listing did not show, or
 * showed with another id: one that lost its marker was seen, and is left, not missing.
 */
import {
  addressOf,
  inPruneScope,
  isPrunable,
  type Prunable,
  type PruneScope,
  type ResourceKey,
} from '../resources/contract.js';
import type { Plan } from '../planner/types.js';
import type { Catalog } from './catalog.js';
import { type InventoryEntry, ownedOrigin } from './inventory-document.js';

export function missingOwned(
  owned: readonly [string, InventoryEntry][],
  scopes: readonly PruneScope[],
  declared: ReadonlySet<string>,
  plan: Plan,
  catalog: Catalog,
): string[] {
  // A refused scope plans no deletion, so its objects would look missing when they are not.
  if (plan.problems.length > 0) return [];
  const listed = plan.listedForPrune;
  return ownedNotPlanned(
    owned,
    declared,
    plan,
    catalog,
    (_kind, ownership) => ownership === 'declared-scope' || (ownership === 'marker' && listed !== undefined),
    (key, entry, ownership) => {
      if (ownership === 'declared-scope') return scopes.some((s) => inPruneScope(key, s));
      // A scope there for imported objects alone did not look for those Converge created: such an
      // object is out of scope (`ownedOutOfScope`), not missing.
      const imported = ownedOrigin(entry) === 'imported';
      if (!scopes.some((s) => (imported || s.importedOnly !== true) && inPruneScope(key, s))) return false;
      const live = listed!.get(addressOf(key));
      if (!listed!.has(addressOf(key))) return true;
      return entry.id !== undefined && live !== undefined && live !== entry.id;
    },
  );
}

/**
 * Objects Converge created of a kind whose service carries its marker, in a scope (an organization,
 * a namespace) where the manifest no longer declares any object of the kind: `--prune` only reaches
 * scopes the manifest manages, so these stay. The plan says so rather than nothing, which read as
 * "nothing to prune" to someone who had just removed a kind's last document from an organization.
 */
export function ownedOutOfScope(
  owned: readonly [string, InventoryEntry][],
  scopes: readonly PruneScope[],
  declared: ReadonlySet<string>,
  plan: Plan,
  catalog: Catalog,
): string[] {
  // A kind with PruneScopes of its own is listed by `ownedOutsidePruneScopes`, for its own reason:
  // the manifest may well declare objects of the kind where these lie.
  const limited = declaredScopeKinds(scopes);
  // A scope that is there for imported objects alone reaches none of those Converge created.
  return ownedNotPlanned(
    owned,
    declared,
    plan,
    catalog,
    (kind, ownership) => ownership === 'marker' && !limited.has(kind),
    // ...and the scope an import adds reaches the imported ones.
    (key, entry) =>
      scopes.every(
        (s) => (s.importedOnly === true && ownedOrigin(entry) !== 'imported') || !inPruneScope(key, s),
      ),
  );
}

/**
 * The inventory's own objects (created or imported) of a kind the manifest declares PruneScopes for,
 * outside all of them, that the manifest no longer declares. Declared scopes replace those Converge
 * implies for the kind (so a `namePrefix` holds), so these are not looked for: a user who followed
 * the emptied-kind refusal's hint and declared a scope for one namespace silently stopped pruning
 * the roles dropped from every other. The plan says so rather than nothing.
 */
export function ownedOutsidePruneScopes(
  owned: readonly [string, InventoryEntry][],
  scopes: readonly PruneScope[],
  declared: ReadonlySet<string>,
  plan: Plan,
  catalog: Catalog,
): string[] {
  const limited = declaredScopeKinds(scopes);
  return ownedNotPlanned(
    owned,
    declared,
    plan,
    catalog,
    (kind) => limited.has(kind),
    (key) => scopes.every((s) => !inPruneScope(key, s)),
  );
}

/** Kinds whose prune the manifest limits with PruneScopes of its own (Converge's carry no name). */
function declaredScopeKinds(scopes: readonly PruneScope[]): ReadonlySet<string> {
  return new Set(scopes.filter((s) => s.name !== undefined).map((s) => s.kind));
}

/**
 * The inventory's objects of prunable kinds `ofKind` picks that the manifest does not declare and
 * the plan does not touch, whose keys `where` picks (inside the prune scopes, or outside all).
 */
function ownedNotPlanned(
  owned: readonly [string, InventoryEntry][],
  declared: ReadonlySet<string>,
  plan: Plan,
  catalog: Catalog,
  ofKind: (kind: string, ownership: Prunable['ownership']) => boolean,
  where: (key: ResourceKey, entry: InventoryEntry, ownership: Prunable['ownership']) => boolean,
): string[] {
  const planned = new Set(plan.changes.map((c) => c.address));
  return owned
    .filter(([address, entry]) => {
      const kind = catalog.kind(entry.kind);
      if (!kind || !isPrunable(kind) || !ofKind(entry.kind, kind.ownership)) return false;
      if (declared.has(address) || planned.has(address)) return false;
      return addressOf(entry.key) === address && where(entry.key, entry, kind.ownership);
    })
    .map(([address]) => address);
}

/** An object of the inventory that no prune can reach: its named connection is gone from the manifest. */
export interface OwnedUnreachable {
  address: string;
  /** The connection the inventory records it on, which the manifest no longer declares. */
  connection: string;
}

/**
 * The inventory's own objects (created or imported) on a named connection the manifest no longer
 * declares for their service. Only a manifest Connection gives the address and the token to read
 * them with, so no prune can list or delete them: asking for a client threw "no registry connection
 * named …", without a position or a way out, and failed the whole plan as soon as the Connection's
 * file was deleted. The plan lists them instead, as it lists objects outside every prune scope.
 */
export function ownedOnUndeclaredConnection(
  owned: readonly [string, InventoryEntry][],
  connections: readonly { name: string; service: string }[],
  catalog: Catalog,
): OwnedUnreachable[] {
  const declared = new Set(connections.map((c) => JSON.stringify([c.service, c.name])));
  return owned.flatMap(([address, entry]) => {
    const kind = catalog.kind(entry.kind);
    const connection = entry.key.connection;
    if (!kind || !isPrunable(kind) || connection === undefined) return [];
    if (addressOf(entry.key) !== address || declared.has(JSON.stringify([kind.service, connection])))
      return [];
    return [{ address, connection }];
  });
}
