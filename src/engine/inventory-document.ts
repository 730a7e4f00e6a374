/**
 * The inventory's content, whichever backend keeps it (a local file, a workspace's state versions):
 * the objects Converge manages and the keyed digests of the write-only values it last applied to them.
 * Anyone with access to the file or the workspace may have written it, so reading checks every field
 * and refuses, naming the source, what is not an inventory; it never trusts a shape it did not check.
 *
 * Version 1 held only `writeOnly` digests (address → attribute → digest). Version 2 holds `objects`,
 * each with its kind, key, connection, live id, whether Converge created (owns) it, and its digests.
 * A version-1 file is read as objects Converge does not own: nothing says who created them, so prune
 * never deletes them until they are created again or imported.
 */
import type { ResourceKey } from '../resources/contract.js';
import { EngineError } from './errors.js';

export const INVENTORY_FORMAT = 'converge-inventory';
export const INVENTORY_FORMAT_VERSION = 2;

/** One object Converge applied, under the address the plan prints (`AclRole/default/web`). */
export interface InventoryEntry {
  kind: string;
  key: ResourceKey;
  /** The service's id of the live object, when the kind reports one. */
  id?: string;
  /**
   * Converge created it (or an operator imported it): `--prune` may delete it once the manifest no
   * longer declares it. False for objects Converge only updated: it never adopts one silently.
   */
  owned: boolean;
  /**
   * How an owned object became Converge's: `created` by an apply, or `imported` (adopted as it was).
   * Absent in inventories written before it was recorded: read as `created` (`ownedOrigin`).
   */
  origin?: OwnedOrigin;
  /** Attribute path → HMAC-SHA-256 hex digest of the write-only value last applied. */
  writeOnly: Record<string, string>;
  /**
   * The id of the state key that keyed `writeOnly` (state-key.ts), so that a run under another key
   * can say why every digest it reads differs. Absent in inventories written before it was recorded.
   */
  writeOnlyKey?: string;
}

export type OwnedOrigin = 'created' | 'imported';

/** How an owned entry became Converge's; `created` for entries from before origins were recorded. */
export function ownedOrigin(entry: Pick<InventoryEntry, 'origin'>): OwnedOrigin {
  return entry.origin ?? 'created';
}

export interface InventoryDocument {
  format: typeof INVENTORY_FORMAT;
  format_version: typeof INVENTORY_FORMAT_VERSION;
  objects: Record<string, InventoryEntry>;
  /**
   * Address → when (ISO time) an apply deleted the object Converge managed: a plan saved before then
   * that creates it again is stale (re-running an old CI job brought back pruned roles). The newest
   * MAX_DELETIONS_KEPT only. Absent in inventories written before it was recorded.
   */
  deleted?: Record<string, string>;
  /**
   * Address → the `serial` of the write that recorded its deletion (beside `deleted`'s time). Saved
   * plans record the serial they read, so "deleted after this plan" compares writes of the one
   * inventory rather than the clocks of two runners. Absent for deletions from before it was kept.
   */
  deleted_serial?: Record<string, number>;
  /**
   * How many times the inventory was written (Terraform's state serial): each write adds one. Absent
   * in inventories written before it was kept (read as 0).
   */
  serial?: number;
}

/** What an inventory remembers of one deletion: when, and the serial of the write that recorded it. */
export interface DeletionRecord {
  at: string;
  serial?: number;
}

/** How many deletions an inventory remembers (the newest): enough for the saved plans still around. */
export const MAX_DELETIONS_KEPT = 1000;

/** The newest MAX_DELETIONS_KEPT of `deleted`: trimmed once, when the inventory is written. */
function newestDeletions(deleted: Record<string, string>): Record<string, string> {
  const all = Object.entries(deleted);
  if (all.length <= MAX_DELETIONS_KEPT) return deleted;
  // ISO times of one form compare as text.
  all.sort(([, a], [, b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.assign(dictionary<string>(), Object.fromEntries(all.slice(-MAX_DELETIONS_KEPT)));
}

/** `deleted_serial` kept to the deletions `deleted` still holds. */
function serialsOf(
  serials: Record<string, number>,
  deleted: Record<string, string> | undefined,
): Record<string, number> {
  const kept = dictionary<number>();
  for (const [address, serial] of Object.entries(serials))
    if (deleted?.[address] !== undefined) kept[address] = serial;
  return kept;
}

/**
 * A write count as the inventory keeps it: a whole number from 0 up, far below what a number holds
 * exactly (a hand-written 2^53 - 1 was written back as 2^53, and the next read refused the file).
 */
const MAX_SERIAL = 2 ** 50;
function isSerial(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 && value <= MAX_SERIAL;
}

/**
 * A deletion time as the inventory keeps it: one ISO form, so times compare as text; one later than
 * an hour from now is not kept (a hand-written far future would refuse a saved create for good).
 */
export function deletionTime(given: string, now = Date.now()): string | undefined {
  const at = Date.parse(given);
  if (!Number.isFinite(at) || at > now + 3_600_000) return undefined;
  return new Date(at).toISOString();
}

/** Maps keyed by text from the file have no prototype: a key `__proto__` is then just a key. */
function dictionary<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

export function emptyInventory(): InventoryDocument {
  return { format: INVENTORY_FORMAT, format_version: INVENTORY_FORMAT_VERSION, objects: dictionary() };
}

const MAX_TEXT = 1024;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_TEXT;
}

/** `Kind/ns/name`, `Kind@conn/name`: the parts `addressOf` joined, for version-1 addresses. */
export function keyFromAddress(address: string): ResourceKey | undefined {
  const match = /^([A-Za-z][A-Za-z0-9]*)(?:@([^/]+))?\/(?:([^/]+)\/)?(.+)$/.exec(address);
  if (!match) return undefined;
  const [, kind, connection, namespace, name] = match;
  return {
    kind: kind!,
    name: name!,
    ...(namespace !== undefined ? { namespace } : {}),
    ...(connection !== undefined ? { connection } : {}),
  };
}

function digests(value: unknown, where: string): Record<string, string> {
  if (value === undefined) return dictionary();
  if (!isRecord(value)) throw new EngineError(`${where}: "writeOnly" must be an object of digests`);
  const out = dictionary<string>();
  for (const [path, digest] of Object.entries(value)) {
    if (typeof digest !== 'string' || !/^[0-9a-f]{64}$/.test(digest))
      throw new EngineError(`${where}: the digest of "${path.slice(0, 80)}" is not a SHA-256 hex digest`);
    out[path] = digest;
  }
  return out;
}

function parseKey(value: unknown, where: string): ResourceKey {
  if (!isRecord(value) || !text(value.kind) || !text(value.name))
    throw new EngineError(`${where}: "key" must have a kind and a name`);
  for (const field of ['namespace', 'connection'] as const) {
    if (value[field] !== undefined && !text(value[field]))
      throw new EngineError(`${where}: "key.${field}" must be a non-empty string`);
  }
  return {
    kind: value.kind,
    name: value.name,
    ...(value.namespace !== undefined ? { namespace: value.namespace as string } : {}),
    ...(value.connection !== undefined ? { connection: value.connection as string } : {}),
  };
}

function parseEntry(address: string, value: unknown, source: string): InventoryEntry {
  const where = `${source}: object "${address.slice(0, 200)}"`;
  if (!isRecord(value)) throw new EngineError(`${where} is not an object`);
  const key = parseKey(value.key, where);
  if (value.id !== undefined && !text(value.id)) throw new EngineError(`${where}: "id" must be a string`);
  if (typeof value.owned !== 'boolean') throw new EngineError(`${where}: "owned" must be true or false`);
  if (value.origin !== undefined && value.origin !== 'created' && value.origin !== 'imported')
    throw new EngineError(`${where}: "origin" must be "created" or "imported"`);
  return {
    kind: key.kind,
    key,
    ...(value.id !== undefined ? { id: value.id as string } : {}),
    owned: value.owned,
    ...(value.origin !== undefined ? { origin: value.origin } : {}),
    writeOnly: digests(value.writeOnly, where),
    ...(value.writeOnlyKey !== undefined ? { writeOnlyKey: keyId(value.writeOnlyKey, where) } : {}),
  };
}

function keyId(value: unknown, where: string): string {
  if (typeof value !== 'string' || !/^[0-9a-f]{16}$/.test(value))
    throw new EngineError(`${where}: "writeOnlyKey" must be a state key id (16 hex digits)`);
  return value;
}

/**
 * Reads an inventory (version 1 or 2) from its JSON text; `source` names it in errors (a path, a
 * workspace). Throws an `EngineError` saying what is wrong.
 */
export function parseInventory(json: string, source: string): InventoryDocument {
  let doc: unknown;
  try {
    doc = JSON.parse(json);
  } catch {
    throw new EngineError(`${source} is not valid JSON; move it away or fix it`);
  }
  if (!isRecord(doc) || doc.format !== INVENTORY_FORMAT)
    throw new EngineError(`${source} is not a Converge inventory; move it away or set CONVERGE_STATE_DIR`);
  const inventory = emptyInventory();
  if (doc.format_version === 1) {
    for (const [address, value] of Object.entries(isRecord(doc.writeOnly) ? doc.writeOnly : {})) {
      const key = keyFromAddress(address);
      if (!key) continue;
      inventory.objects[address] = {
        kind: key.kind,
        key,
        owned: false,
        writeOnly: digests(value, `${source}: object "${address.slice(0, 200)}"`),
      };
    }
    return inventory;
  }
  if (doc.format_version !== INVENTORY_FORMAT_VERSION)
    throw new EngineError(
      `${source} has inventory format_version ${JSON.stringify(doc.format_version)?.slice(0, 20)}; this Converge reads 1 and 2 (a newer Converge wrote it?)`,
    );
  if (!isRecord(doc.objects)) throw new EngineError(`${source}: "objects" must be an object`);
  for (const [address, value] of Object.entries(doc.objects))
    inventory.objects[address] = parseEntry(address, value, source);
  if (doc.deleted !== undefined) {
    if (!isRecord(doc.deleted)) throw new EngineError(`${source}: "deleted" must be an object`);
    const deleted = dictionary<string>();
    for (const [address, at] of Object.entries(doc.deleted).slice(0, MAX_DELETIONS_KEPT * 2)) {
      if (!text(at) || !Number.isFinite(Date.parse(at)))
        throw new EngineError(`${source}: "deleted" of "${address.slice(0, 200)}" must be a time`);
      const kept = deletionTime(at);
      if (kept !== undefined) deleted[address] = kept;
    }
    inventory.deleted = deleted;
  }
  if (doc.deleted_serial !== undefined) {
    if (!isRecord(doc.deleted_serial)) throw new EngineError(`${source}: "deleted_serial" must be an object`);
    const serials = dictionary<number>();
    for (const [address, serial] of Object.entries(doc.deleted_serial).slice(0, MAX_DELETIONS_KEPT * 2)) {
      if (!isSerial(serial))
        throw new EngineError(
          `${source}: "deleted_serial" of "${address.slice(0, 200)}" must be a whole number from 0 up to ${MAX_SERIAL}`,
        );
      if (inventory.deleted?.[address] !== undefined) serials[address] = serial;
    }
    inventory.deleted_serial = serials;
  }
  if (doc.serial !== undefined) {
    if (!isSerial(doc.serial))
      throw new EngineError(`${source}: "serial" must be a whole number from 0 up to ${MAX_SERIAL}`);
    inventory.serial = doc.serial;
  }
  // A deletion recorded by a write the inventory has not made yet is not one (a hand-written
  // future serial would refuse every saved create of the address for good): dropped, as a future
  // time is.
  if (inventory.deleted_serial)
    for (const [address, serial] of Object.entries(inventory.deleted_serial))
      if (serial > (inventory.serial ?? 0)) delete inventory.deleted_serial[address];
  return inventory;
}

export function serializeInventory(doc: InventoryDocument): string {
  const deleted = doc.deleted ? newestDeletions(doc.deleted) : undefined;
  const written = {
    ...doc,
    ...(deleted ? { deleted } : {}),
    ...(doc.deleted_serial ? { deleted_serial: serialsOf(doc.deleted_serial, deleted) } : {}),
  };
  return `${JSON.stringify(written, null, 2)}\n`;
}
