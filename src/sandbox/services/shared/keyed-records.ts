/**
 * Records by ID with a second index by name (a namespace's or organization's, with the name): a read
 * by name used to scan every record, so creating n records cost n² (the bench creates 1,000 roles
 * and 500 workspaces; its CPU run seeds 10,000 roles). Records are replaced, never renamed in place,
 * so `set` keeps both indexes in step.
 */
export class KeyedRecords<T> {
  private readonly byId = new Map<string, T>();
  private readonly idByName = new Map<string, string>();

  constructor(
    private readonly idOf: (record: T) => string,
    /** The scope and name that identify a record besides its ID. */
    private readonly nameOf: (record: T) => readonly [scope: string, name: string],
  ) {}

  get size(): number {
    return this.byId.size;
  }

  get(id: string): T | undefined {
    return this.byId.get(id);
  }

  byName(scope: string, name: string): T | undefined {
    const id = this.idByName.get(nameKey(scope, name));
    return id === undefined ? undefined : this.byId.get(id);
  }

  set(record: T): void {
    const id = this.idOf(record);
    this.forgetName(id);
    this.byId.set(id, record);
    this.idByName.set(nameKey(...this.nameOf(record)), id);
  }

  delete(id: string): boolean {
    this.forgetName(id);
    return this.byId.delete(id);
  }

  values(): IterableIterator<T> {
    return this.byId.values();
  }

  /** Drops the name of the record stored at `id`, unless another record has taken that name since. */
  private forgetName(id: string): void {
    const old = this.byId.get(id);
    if (old === undefined) return;
    const key = nameKey(...this.nameOf(old));
    if (this.idByName.get(key) === id) this.idByName.delete(key);
  }
}

/** Unambiguous whatever the strings hold (a separator character could be part of a name). */
function nameKey(scope: string, name: string): string {
  return JSON.stringify([scope, name]);
}
