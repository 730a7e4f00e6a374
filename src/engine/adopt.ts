/**
 * `converge import ADDRESS` (and `apply --import ADDRESS`): takes an existing live object under
 * Converge's management by recording it in the inventory. Only an object the manifest declares, and
 * that exists on its service, is adopted: the manifest says what it should be, the service that it
 * is there. Nothing is written to the service; the next plan shows how it differs from the manifest.
 */
import type { Manifest } from '../manifest/types.js';
import { addressOf, isPrunable } from '../resources/contract.js';
import type { ServiceConnections } from './connections.js';
import type { Catalog } from './catalog.js';
import { desiredObjects } from './workflow.js';
import { EngineError } from './errors.js';
import type { ManagedObjects } from './inventory.js';
import { defaultCatalog } from './services.js';
import { addressesMatching, closestAddresses } from './targeting.js';

export interface AdoptResult {
  address: string;
  id?: string;
  /** False when the inventory already had it, or (`notLive`) there is nothing to adopt. */
  adopted: boolean;
  /**
   * Named by a glob, and not on its service: left for an apply to create. A glob's match that is not
   * there yet is no reason to import none of the others.
   */
  notLive?: true;
  /**
   * The live object lacks its service's ownership marker (it was made outside Converge): `adds`
   * names where the next plan shows the marker being added; without it only a create sets the
   * marker, so `--prune` (which trusts the marker for such kinds) will not delete the object.
   */
  marker?: { adds?: string };
  /**
   * The live object carries Converge's ownership marker, yet this inventory did not record it: a
   * Converge with another inventory (another manifest) made or updated it, and may manage it still.
   */
  markedElsewhere?: true;
}

/** Adopts each address; throws an `EngineError` naming the first that is undeclared or missing. */
export async function adoptObjects(
  manifest: Manifest,
  addresses: readonly string[],
  connections: ServiceConnections,
  inventory: { readonly objects: ManagedObjects; save(): Promise<void> },
  catalog: Catalog = defaultCatalog,
): Promise<AdoptResult[]> {
  const desired = desiredObjects(manifest, connections, catalog);
  const byAddress = new Map(desired.map((d) => [addressOf(d.key), d]));
  // Globs as --target takes them (`AclRole/default/*`): a whole export is imported in one command.
  const present = desired.filter((d) => d.ensure !== 'absent').map((d) => addressOf(d.key));
  const named: string[] = [];
  const byGlob = new Set<string>();
  for (const pattern of addresses) {
    const matched = addressesMatching(pattern, present);
    if (matched.length === 0)
      throw new EngineError(
        `cannot import ${pattern}: the pattern matches no object the manifest declares${
          closestAddresses(pattern, present, 3).length > 0
            ? `. Declared addresses closest to it: ${closestAddresses(pattern, present, 3).join(', ')}`
            : ''
        }.`,
      );
    for (const address of matched) if (!named.includes(address)) named.push(address);
    if (matched[0] !== pattern) for (const address of matched) byGlob.add(address);
  }
  const results: AdoptResult[] = [];
  for (const address of named) {
    const d = byAddress.get(address);
    if (!d) {
      const closest = closestAddresses(address, [...byAddress.keys()], 3);
      throw new EngineError(
        `cannot import ${address}: the manifest does not declare it, so Converge would not know what it should be; declare it first${
          closest.length > 0 ? `. Declared addresses closest to it: ${closest.join(', ')}` : ''
        }.`,
        'declare-from-export',
      );
    }
    if (d.ensure === 'absent') {
      throw new EngineError(`cannot import ${address}: the manifest declares it absent (ensure: absent)`);
    }
    const known = inventory.objects.entry(address);
    if (known?.owned) {
      results.push({ address, ...(known.id ? { id: known.id } : {}), adopted: false });
      continue;
    }
    const kind = catalog.kind(d.key.kind)!;
    const observed = await kind.observe(connections, d.key);
    if (!observed && byGlob.has(address)) {
      results.push({ address, adopted: false, notLive: true });
      continue;
    }
    if (!observed) {
      throw new EngineError(
        `cannot import ${address}: no such object on the ${kind.service} service; applying the manifest creates it instead`,
      );
    }
    // Adopted objects are Converge's own from now on: `--prune` may delete them once undeclared.
    inventory.objects.record(address, {
      kind: d.key.kind,
      key: d.key,
      owned: true,
      origin: 'imported',
      ...(observed.id ? { id: observed.id } : {}),
    });
    const scope = {
      kind: d.key.kind,
      ...(d.key.namespace !== undefined ? { namespace: d.key.namespace } : {}),
      ...(d.key.connection !== undefined ? { connection: d.key.connection } : {}),
    };
    const markerKind = isPrunable(kind) && kind.ownership === 'marker';
    const unmarked = markerKind && !kind.owns(observed, scope);
    results.push({
      address,
      ...(observed.id ? { id: observed.id } : {}),
      adopted: true,
      ...(unmarked ? { marker: kind.markerAttribute ? { adds: kind.markerAttribute } : {} } : {}),
      // An object this inventory only updated is not its own either: a workspace's marker is set by
      // a create alone, so a marked one it only updated is another's.
      ...(markerKind && !unmarked ? { markedElsewhere: true as const } : {}),
    });
  }
  await inventory.save();
  return results;
}
