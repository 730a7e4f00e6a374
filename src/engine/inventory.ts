/**
 * The local inventory: what Converge keeps between runs on this machine. Today that is the digests of
 * write-only values it applied (see `planner/write-only.ts`), in `.converge/inventory.json` under the
 * current folder (or `CONVERGE_STATE_DIR`), keyed with HMAC-SHA-256. The key comes from
 * `CONVERGE_STATE_KEY`, or is generated once into `.converge/state.key` (mode 0600); either way it
 * must be 32+ random bytes in hex or base64 (state-key.ts). The same key signs saved plans. A
 * workspace-backed inventory, shared by every machine that applies, is planned; until then a fresh
 * checkout (a CI runner) sees each write-only value as "not recorded" and sets it once.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { canonicalJson } from '../resources/compare.js';
import type { WriteOnlyDigests } from '../planner/write-only.js';
import { EngineError } from './errors.js';
import { parseStateKey, type StateKey, stateKeyFrom } from './state-key.js';

const FORMAT = 'converge-inventory';

interface InventoryFile {
  format: typeof FORMAT;
  format_version: 1;
  /** address → attribute path → HMAC-SHA-256 hex digest. */
  writeOnly: Record<string, Record<string, string>>;
  /** address → an object Converge took over with `converge import` (absent until one is). */
  managed?: Record<string, AdoptedEntry>;
}

/** What the inventory keeps of an object Converge adopted: enough to find it again. */
export interface AdoptedEntry {
  kind: string;
  /** The service's id of the live object, when it has one. */
  id?: string;
  connection?: string;
  adoptedAt: string;
}

/** Where adoptions are recorded (`converge import`); the inventory of managed objects implements it. */
export interface AdoptionStore {
  adopted(address: string): AdoptedEntry | undefined;
  adopt(address: string, entry: AdoptedEntry): void;
  save(): void;
}

export class LocalInventory implements WriteOnlyDigests, AdoptionStore {
  readonly dir: string;
  private data: InventoryFile | undefined;
  private key: StateKey | undefined;
  private dirty = false;

  constructor(private readonly env: NodeJS.ProcessEnv) {
    this.dir = path.resolve(env.CONVERGE_STATE_DIR || '.converge');
  }

  get file(): string {
    return path.join(this.dir, 'inventory.json');
  }

  private load(): InventoryFile {
    if (this.data) return this.data;
    let text: string | undefined;
    try {
      text = readFileSync(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw inventoryError(this.file, error);
    }
    const parsed = text === undefined ? undefined : (JSON.parse(text) as Partial<InventoryFile>);
    if (parsed !== undefined && parsed.format !== FORMAT) {
      throw new EngineError(
        `${this.file} is not a Converge inventory; move it away or set CONVERGE_STATE_DIR`,
      );
    }
    this.data = {
      format: FORMAT,
      format_version: 1,
      writeOnly: parsed?.writeOnly ?? {},
      ...(parsed?.managed ? { managed: parsed.managed } : {}),
    };
    return this.data;
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
    } catch {
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
    return this.load().writeOnly[address]?.[attribute];
  }

  record(address: string, attribute: string, digest: string): void {
    const all = this.load().writeOnly;
    all[address] = { ...all[address], [attribute]: digest };
    this.dirty = true;
  }

  forget(address: string, attribute?: string): void {
    const all = this.load().writeOnly;
    const entry = all[address];
    if (!entry) return;
    if (attribute === undefined) delete all[address];
    else {
      if (!(attribute in entry)) return;
      delete entry[attribute];
      if (Object.keys(entry).length === 0) delete all[address];
    }
    this.dirty = true;
  }

  adopted(address: string): AdoptedEntry | undefined {
    return this.load().managed?.[address];
  }

  adopt(address: string, entry: AdoptedEntry): void {
    const data = this.load();
    data.managed = { ...data.managed, [address]: entry };
    this.dirty = true;
  }

  /** Writes the inventory when something was recorded: beside itself, then renamed, mode 0600. */
  save(): void {
    if (!this.dirty || !this.data) return;
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const tmp = `${this.file}.${randomBytes(4).toString('hex')}.tmp`;
    writeFileSync(tmp, `${JSON.stringify(this.data, null, 2)}\n`, { mode: 0o600 });
    chmodSync(tmp, 0o600);
    renameSync(tmp, this.file);
    this.dirty = false;
  }
}

function inventoryError(file: string, error: unknown): EngineError {
  return new EngineError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
}
