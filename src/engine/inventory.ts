/**
 * The inventory: what Converge keeps between runs. The objects it manages (see inventory-document.ts)
 * and the digests of write-only values it applied to them (see `planner/write-only.ts`), keyed with
 * HMAC-SHA-256, in `.converge/inventory.json` under the current folder (or `CONVERGE_STATE_DIR`), or
 * in another backend (`CONVERGE_INVENTORY`, see inventory-backend.ts). The key comes from
 * `CONVERGE_STATE_KEY`, or is generated once into `.converge/state.key` (mode 0600); either way it
 * must be 32+ random bytes in hex or base64 (state-key.ts). The same key signs saved plans; runs
 * that share a workspace inventory must share the key too (CONVERGE_STATE_KEY).
 */
import { createHmac, randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, realpathSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { canonicalJson } from '../resources/compare.js';
import type { ResourceKey } from '../resources/contract.js';
import type { WriteOnlyDigests } from '../planner/write-only.js';
import { EngineError } from './errors.js';
import {
  type DeletionRecord,
  emptyInventory,
  type InventoryDocument,
  type InventoryEntry,
  keyFromAddress,
  parseInventory,
  serializeInventory,
} from './inventory-document.js';
import { parseStateKey, type StateKey, stateKeyFrom } from './state-key.js';
import { acquireStateLock, type LockOptions, STATE_LOCK_FILE } from './state-lock.js';

/**
 * Where the inventory's text lives and how runs take turns on it. The local file (the default) is
 * read synchronously, so a plan that never locks can still read it; other backends are read by
 * `open()` first.
 */
export interface InventoryBackend {
  /** `file /path/inventory.json`, `workspace acme/converge-inventory`: for messages. */
  readonly description: string;
  /**
   * Which inventory this is, as a saved plan records it: `apply FILE` refuses to apply a plan with
   * another inventory than it was planned with (what it prunes is what that inventory recorded).
   */
  readonly identity?: InventoryIdentity;
  readSync?(): string | undefined;
  read(): Promise<string | undefined>;
  write(text: string): Promise<void>;
  /** A write that is done when it returns: the last thing a process quitting at once can do. */
  writeSync?(text: string): void;
  lock(options: LockOptions): Promise<{ release(): Promise<void> }>;
  /**
   * What `lock` locks, for telling whether two backends share one lock: two inventory files in one
   * folder share its `apply.lock`, and a run holding one must not wait for itself on the other.
   */
  readonly lockedThing: string;
  close?(): Promise<void>;
  /** The live object that stores the inventory itself, if any: never exported as a managed object. */
  readonly storedIn?: ResourceKey;
  /**
   * Why the last read found no inventory at all (`the file does not exist`, `it does not exist, or
   * this token may not see it`); undefined when it found one, or has not read.
   */
  readonly absentBecause?: string | undefined;
}

/**
 * Thrown by a backend's `write` when the run's lock had been released by someone else and the
 * backend took it again: nothing was written, and the inventory may have changed meanwhile, so the
 * caller reads it again, merges its own changes in and writes once more (`LocalInventory.save`).
 */
export class InventoryLockRetaken extends Error {
  constructor(readonly where: string) {
    super(`the lock of ${where} was released by someone else during this run and has been taken again`);
    this.name = 'InventoryLockRetaken';
  }
}

/** What a backend's `lock` is told: who is asking (shown to whoever waits), how long to wait. */
export type InventoryLockOptions = LockOptions;

/**
 * An inventory's identity: its file's absolute path, or its workspace and the address of the
 * workspaces service holding it (never a token).
 */
export type InventoryIdentity =
  /**
   * `default`: the local inventory under CONVERGE_STATE_DIR, CONVERGE_INVENTORY not set. Each
   * machine's (each CI job's) own: a plan made with it applies with the default of another folder.
   */
  { type: 'file'; path: string; default?: true } | { type: 'workspace'; workspace: string; address: string };

/** The local file backend: `.converge/inventory.json` (or `CONVERGE_INVENTORY=file:PATH`). */
export class FileInventoryBackend implements InventoryBackend {
  constructor(readonly file: string) {}

  get description(): string {
    return `file ${this.file}`;
  }

  get identity(): InventoryIdentity {
    return { type: 'file', path: path.resolve(this.file) };
  }

  absentBecause: string | undefined;

  readSync(): string | undefined {
    try {
      const text = readFileSync(this.file, 'utf8');
      this.absentBecause = undefined;
      return text;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        this.absentBecause = 'the file does not exist';
        return undefined;
      }
      throw inventoryError(this.file, error);
    }
  }

  async read(): Promise<string | undefined> {
    return this.readSync();
  }

  async write(text: string): Promise<void> {
    this.writeSync(text);
  }

  /** Beside itself, then renamed, mode 0600: a crash never leaves half a file. */
  writeSync(text: string): void {
    const dir = path.dirname(this.file);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const tmp = `${this.file}.${randomBytes(4).toString('hex')}.tmp`;
    writeFileSync(tmp, text, { mode: 0o600 });
    chmodSync(tmp, 0o600);
    renameSync(tmp, this.file);
  }

  get lockedThing(): string {
    // The folder's real path: two paths to one folder (a symbolic link) are one lock.
    const dir = path.resolve(path.dirname(this.file));
    let real = dir;
    try {
      real = realpathSync(dir);
    } catch {
      // Not there yet: no link to follow, and the lock will be made where the path says.
    }
    return `file ${path.join(real, STATE_LOCK_FILE)}`;
  }

  /** The apply lock beside the file (`apply.lock`), as before there were backends. */
  async lock(options: LockOptions): Promise<{ release(): Promise<void> }> {
    const held = await acquireStateLock(path.dirname(this.file), options);
    return { release: async () => held.release() };
  }
}

/**
 * The objects Converge manages, for prune, `converge inventory` and import: a small API over the
 * inventory's entries, keyed by the address the plan prints.
 */
export interface ManagedObjects {
  entries(): [string, InventoryEntry][];
  entry(address: string): InventoryEntry | undefined;
  /** Records (or replaces) an object; its write-only digests are kept when the entry has none. */
  record(
    address: string,
    entry: Omit<InventoryEntry, 'writeOnly'> & { writeOnly?: Record<string, string> },
  ): void;
  /** Drops an object and its digests. */
  forget(address: string): void;
  /**
   * The live object that stores the inventory itself (its workspace), if any: no manifest that uses
   * the inventory may manage it.
   */
  readonly storedIn?: ResourceKey;
  /**
   * Where the inventory is and why none was found there (`workspace acme/inv: it does not exist, or
   * this token may not see it`), when none was: a prune then knows of nothing Converge made.
   */
  readonly absent?: string;
}

export class LocalInventory implements WriteOnlyDigests {
  /** The state folder: the state key, and the local inventory unless CONVERGE_INVENTORY says otherwise. */
  readonly dir: string;
  readonly backend: InventoryBackend;
  private data: InventoryDocument | undefined;
  private key: StateKey | undefined;
  private dirty = false;

  constructor(
    private readonly env: NodeJS.ProcessEnv,
    backend?: InventoryBackend,
  ) {
    this.dir = path.resolve(env.CONVERGE_STATE_DIR || '.converge');
    this.backend = backend ?? new FileInventoryBackend(path.join(this.dir, 'inventory.json'));
    this.isDefault = backend === undefined;
  }

  /** Which inventory this is, as a saved plan records it (`InventoryBackend.identity`). */
  get identity(): InventoryIdentity | undefined {
    const identity = this.backend.identity;
    return identity?.type === 'file' && this.isDefault ? { ...identity, default: true } : identity;
  }

  /** The local file under CONVERGE_STATE_DIR, CONVERGE_INVENTORY not set. */
  private readonly isDefault: boolean;

  /** The local file, when that is the backend. */
  get file(): string {
    return this.backend instanceof FileInventoryBackend ? this.backend.file : this.backend.description;
  }

  /** Reads the inventory from its backend (again: what another run saved meanwhile counts). */
  async open(): Promise<this> {
    const text = await this.backend.read();
    this.data = parsed(text, this.backend.description);
    this.opened = { text };
    this.dirty = false;
    return this;
  }

  /**
   * The text as read by `open` (or last written): what this run changed is told from what another
   * run did by it. Kept as text, parsed again only for a merge, so a run pays nothing for it.
   */
  private opened: { text: string | undefined } | undefined;

  /** Set when a save found this run's lock released, took it again and merged (for the front end). */
  retakenLock: string | undefined;

  private load(): InventoryDocument {
    if (this.data) return this.data;
    if (!this.backend.readSync)
      throw new EngineError(`the inventory (${this.backend.description}) was not opened`);
    this.data = parsed(this.backend.readSync(), this.backend.description);
    return this.data;
  }

  /** The objects it holds; see `ManagedObjects`. */
  get objects(): ManagedObjects {
    return {
      entries: () => Object.entries(this.load().objects).sort(([a], [b]) => a.localeCompare(b)),
      entry: (address) => this.load().objects[address],
      record: (address, entry) => {
        const all = this.load().objects;
        // Digests and the key that made them go together: both the entry's, or both kept.
        const digestsFrom = entry.writeOnly === undefined ? all[address] : entry;
        const { writeOnlyKey: _given, ...rest } = entry;
        all[address] = {
          ...rest,
          writeOnly: digestsFrom?.writeOnly ?? {},
          ...(digestsFrom?.writeOnlyKey !== undefined ? { writeOnlyKey: digestsFrom.writeOnlyKey } : {}),
        };
        this.dirty = true;
      },
      forget: (address) => this.forget(address),
      ...(this.backend.storedIn ? { storedIn: this.backend.storedIn } : {}),
      ...(this.absent !== undefined ? { absent: this.absent } : {}),
    };
  }

  /**
   * When an apply deleted the object at `address` Converge managed, if it remembers: the time (ISO)
   * and the serial of the inventory write that recorded it (absent for older records).
   */
  deletion(address: string): DeletionRecord | undefined {
    const doc = this.load();
    const at = doc.deleted?.[address];
    if (at === undefined) return undefined;
    const serial = doc.deleted_serial?.[address];
    return serial === undefined ? { at } : { at, serial };
  }

  /** How many times the inventory was written (0 for one never written, or written before it was kept). */
  get serial(): number {
    return this.load().serial ?? 0;
  }

  /**
   * Takes over another inventory's memory of deletions (`converge inventory migrate`), and its write
   * count: the serials its saved plans recorded go on comparing with this inventory's writes.
   */
  copyDeletions(from: LocalInventory): void {
    const source = from.load();
    const doc = this.load();
    if ((source.serial ?? 0) > (doc.serial ?? 0)) {
      doc.serial = source.serial;
      this.dirty = true;
    }
    const theirs = source.deleted;
    if (!theirs || Object.keys(theirs).length === 0) return;
    doc.deleted = Object.assign(Object.create(null) as Record<string, string>, doc.deleted, theirs);
    if (source.deleted_serial)
      doc.deleted_serial = Object.assign(
        Object.create(null) as Record<string, number>,
        doc.deleted_serial,
        source.deleted_serial,
      );
    this.dirty = true;
  }

  /** Where the inventory is and why none was read there, when none was (see ManagedObjects.absent). */
  get absent(): string | undefined {
    const why = this.backend.absentBecause;
    return why === undefined ? undefined : `${this.backend.description}: ${why}`;
  }

  get keyFile(): string {
    return path.join(this.dir, 'state.key');
  }

  /**
   * The state key that keys digests and saved plans: CONVERGE_STATE_KEY, else the key file, created
   * on first use (32 random bytes in hex).
   */
  stateKey(): StateKey {
    if (this.key) return this.key;
    const existing = this.existingStateKey();
    if (existing) return existing;
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const fresh = randomBytes(32);
    // `wx`: two runs starting at once must not each write a different key.
    try {
      writeFileSync(this.keyFile, `${fresh.toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
      return (this.key = stateKeyFrom(fresh, this.keyFile));
    } catch (error) {
      // Only a run that wrote the key first is a reason to read it; a folder we cannot write is not.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw inventoryError(this.keyFile, error);
      return this.existingStateKey()!;
    }
  }

  /** The state key if one is set or saved, without creating one (to check a saved plan's MAC). */
  existingStateKey(): StateKey | undefined {
    if (this.key) return this.key;
    const fromEnv = this.env.CONVERGE_STATE_KEY;
    if (fromEnv) {
      const key = parseStateKey(
        fromEnv,
        'CONVERGE_STATE_KEY',
        'set it to such a value, the same in every job that plans or applies',
      );
      return (this.key = stateKeyFrom(key, 'CONVERGE_STATE_KEY'));
    }
    let text: string;
    try {
      text = readFileSync(this.keyFile, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw inventoryError(this.keyFile, error);
    }
    const key = parseStateKey(
      text,
      `the state key file ${this.keyFile}`,
      'write such a value into it, or delete it to have one generated (write-only values are then set again once)',
    );
    return (this.key = stateKeyFrom(key, this.keyFile));
  }

  digest(address: string, attribute: string, value: unknown): string {
    return createHmac('sha256', this.stateKey().key)
      .update(`${address}\u0000${attribute}\u0000${canonicalJson(value)}`)
      .digest('hex');
  }

  recorded(address: string, attribute: string): string | undefined {
    return this.load().objects[address]?.writeOnly[attribute];
  }

  /**
   * A digest for an object the apply changed. An object not yet in the inventory is recorded as
   * not owned; `recordApplied` says whether Converge created it.
   */
  record(address: string, attribute: string, digest: string): void {
    const all = this.load().objects;
    const entry = all[address] ?? unownedEntry(address);
    if (!entry) return;
    all[address] = {
      ...entry,
      writeOnly: { ...entry.writeOnly, [attribute]: digest },
      writeOnlyKey: this.stateKey().id,
    };
    this.dirty = true;
  }

  /**
   * The id of the state key that keyed an object's recorded digests, when that is not this run's
   * key: none of them can match then, and the plan says why.
   */
  recordedUnderOtherKey(address: string): string | undefined {
    const recordedKey = this.load().objects[address]?.writeOnlyKey;
    const current = this.existingStateKey();
    return recordedKey !== undefined && current !== undefined && recordedKey !== current.id
      ? recordedKey
      : undefined;
  }

  /** The id of this run's state key and where it came from, for messages. */
  currentKey(): { id: string; source: string } | undefined {
    const key = this.existingStateKey();
    return key && { id: key.id, source: key.source };
  }

  isRecorded(address: string): boolean {
    return this.load().objects[address] !== undefined;
  }

  /** Drops an object (it was deleted), or one attribute's digest (the value was cleared). */
  forget(address: string, attribute?: string): void {
    const all = this.load().objects;
    const entry = all[address];
    if (!entry) return;
    if (attribute === undefined) delete all[address];
    else {
      if (!(attribute in entry.writeOnly)) return;
      const { [attribute]: _dropped, ...rest } = entry.writeOnly;
      all[address] = { ...entry, writeOnly: rest };
    }
    this.dirty = true;
  }

  /**
   * What an apply did, object by object: a created object is Converge's own (prune may delete it
   * later), an updated one keeps what it was (never adopted silently) with its live id refreshed, a
   * deleted one is dropped.
   */
  recordApplied(applied: readonly AppliedObject[]): void {
    for (const a of applied) {
      if (a.action === 'delete') {
        this.forget(a.address);
        // Remembered, so that a plan saved before this apply does not make the object again.
        const doc = this.load();
        (doc.deleted ??= Object.create(null) as Record<string, string>)[a.address] = new Date().toISOString();
        // The serial the next write gives the inventory (save adds one): plans read before have less.
        (doc.deleted_serial ??= Object.create(null) as Record<string, number>)[a.address] =
          (doc.serial ?? 0) + 1;
        this.dirty = true;
        continue;
      }
      // Made again: a plan saved since may make it too, once it is gone again.
      const doc = this.load();
      if ((a.action === 'create' || a.action === 'replace') && doc.deleted?.[a.address] !== undefined) {
        delete doc.deleted[a.address];
        if (doc.deleted_serial) delete doc.deleted_serial[a.address];
        this.dirty = true;
      }
      const existing = this.load().objects[a.address];
      const created = a.action === 'create' || a.action === 'replace';
      // Another object under the recorded one's name (that one was deleted by hand): changing it
      // does not make it Converge's, and the record of the one that is gone goes.
      if (!created && existing?.id !== undefined && a.id !== undefined && a.id !== existing.id) {
        this.forget(a.address);
        continue;
      }
      // An object Converge only updated is recorded as not its own: an update of a job or a
      // workspace adds Converge's ownership marker, and without this record the next `--prune` took
      // the marker for a create and deleted someone else's job as "created by Converge".
      if (!created && !existing) {
        this.objects.record(a.address, {
          kind: a.key.kind,
          key: a.key,
          owned: false,
          ...(a.id !== undefined ? { id: a.id } : {}),
        });
        continue;
      }
      this.objects.record(a.address, {
        kind: a.key.kind,
        key: a.key,
        owned: created || (existing?.owned ?? false),
        // Made again by a replace, an imported object is now one Converge created.
        ...(created ? { origin: 'created' as const } : existing?.origin ? { origin: existing.origin } : {}),
        ...(a.id !== undefined ? { id: a.id } : existing?.id !== undefined ? { id: existing.id } : {}),
      });
    }
  }

  /** Writes the inventory to its backend when something changed. */
  async save(): Promise<void> {
    if (!this.dirty || !this.data) return;
    let text = serializeInventory(this.data);
    // Records made and dropped again (a create that did not land) leave nothing to write: a
    // workspace inventory would otherwise gain a state version that changes nothing.
    if (this.opened !== undefined && text === this.opened.text) {
      this.dirty = false;
      return;
    }
    this.data.serial = (this.data.serial ?? 0) + 1;
    text = serializeInventory(this.data);
    try {
      await this.backend.write(text);
    } catch (error) {
      if (!(error instanceof InventoryLockRetaken) || !this.opened) throw error;
      // Once: a second loss of the lock in these few requests is refused like any other.
      const source = this.backend.description;
      const latest = parsed(await this.backend.read(), source);
      const before = parsed(this.opened.text, source).objects;
      latest.objects = mergedRecords(before, this.data.objects, latest.objects);
      // This run's deletions (and its creates, which undo one) over what the other run left.
      const deletedBefore = parsed(this.opened.text, source).deleted ?? {};
      const ours = this.data.deleted ?? {};
      const merged = Object.assign(Object.create(null) as Record<string, string>, latest.deleted);
      const mergedSerials = Object.assign(
        Object.create(null) as Record<string, number>,
        latest.deleted_serial,
      );
      // Written over the other run's last write: this write's serial follows that one's.
      latest.serial = Math.max(latest.serial ?? 0, this.data.serial - 1) + 1;
      for (const [address, at] of Object.entries(ours))
        if (deletedBefore[address] !== at) {
          merged[address] = at;
          mergedSerials[address] = latest.serial;
        }
      for (const address of Object.keys(deletedBefore))
        if (ours[address] === undefined) {
          delete merged[address];
          delete mergedSerials[address];
        }
      latest.deleted = merged;
      latest.deleted_serial = mergedSerials;
      text = serializeInventory(latest);
      await this.backend.write(text);
      this.data = latest;
      this.retakenLock = error.where;
    }
    this.opened = { text };
    this.dirty = false;
  }

  /**
   * Writes what changed now, where the backend can without waiting (the local file): for a process
   * that quits at once (a second Ctrl-C), so the objects it created are not left unrecorded and
   * beyond prune's reach. Says whether it saved.
   */
  saveNow(): boolean {
    if (!this.dirty || !this.data || !this.backend.writeSync) return false;
    this.data.serial = (this.data.serial ?? 0) + 1;
    this.backend.writeSync(serializeInventory(this.data));
    this.dirty = false;
    return true;
  }

  /** Whether this run changed records not yet saved. */
  get unsaved(): boolean {
    return this.dirty;
  }

  /** Takes the backend's lock; see `lockInventory` in workflow.ts. */
  lock(options: InventoryLockOptions): Promise<{ release(): Promise<void> }> {
    return this.backend.lock(options);
  }

  async close(): Promise<void> {
    await this.backend.close?.();
  }
}

/** One change the apply made, as the inventory records it. */
export interface AppliedObject {
  address: string;
  key: ResourceKey;
  action: 'create' | 'update' | 'replace' | 'delete';
  id?: string;
}

/**
 * This run's changes to the records (from `opened` to `ours`) applied to what the inventory holds
 * now (`latest`), entry by entry: an entry this run added, changed or dropped is taken from `ours`;
 * every other entry is `latest`'s, whatever another run wrote there while this run's lock was free.
 */
export function mergedRecords(
  opened: Record<string, InventoryEntry>,
  ours: Record<string, InventoryEntry>,
  latest: Record<string, InventoryEntry>,
): Record<string, InventoryEntry> {
  const merged = Object.assign(Object.create(null) as Record<string, InventoryEntry>, latest);
  for (const address of new Set([...Object.keys(opened), ...Object.keys(ours)])) {
    const before = opened[address];
    const after = ours[address];
    if (canonicalJson(before ?? null) === canonicalJson(after ?? null)) continue;
    if (after === undefined) delete merged[address];
    else merged[address] = after;
  }
  return merged;
}

function unownedEntry(address: string): InventoryEntry | undefined {
  const key = keyFromAddress(address);
  return key && { kind: key.kind, key, owned: false, writeOnly: {} };
}

function parsed(text: string | undefined, source: string): InventoryDocument {
  return text === undefined ? emptyInventory() : parseInventory(text, source);
}

function inventoryError(file: string, error: unknown): EngineError {
  return new EngineError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
}
