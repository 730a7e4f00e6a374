/**
 * The registry's state: roles, policies and one raft-like index that only ever grows (also across
 * restarts with a data folder). Each write takes the next index and records it as the namespace's
 * "table index" for roles or policies; blocking queries compare against that, so a write in one
 * namespace does not wake queries on another.
 */
import { ChangeFeed } from '../../core/blocking.js';
import { ALL_NAMESPACES, DEFAULT_NAMESPACE, type PolicyRecord, type RoleRecord } from './model.js';
import { hasFields } from '../shared/record-shape.js';
import { KeyedRecords } from '../shared/keyed-records.js';

export interface RegistrySnapshot {
  index: number;
  roles: RoleRecord[];
  policies: PolicyRecord[];
  tableIndexes: { roles: Record<string, number>; policies: Record<string, number> };
}

export class RegistryStore {
  private index = 0;
  // Names are unique and found regardless of case, as the real registry's name index lower-cases
  // them (Consul, agent/consul/state/acl_schema.go: indexNameFromACLRole and indexFromQuery).
  private readonly roles = new KeyedRecords<RoleRecord>(
    (r) => r.ID,
    (r) => [r.Namespace, r.Name.toLowerCase()],
  );
  private readonly policies = new KeyedRecords<PolicyRecord>(
    (p) => p.ID,
    (p) => [p.Namespace, p.Name],
  );
  private readonly roleTableIndex = new Map<string, number>();
  private readonly policyTableIndex = new Map<string, number>();
  readonly changes = new ChangeFeed();

  constructor(private readonly onChange: () => void = () => {}) {}

  /** The index the next write will carry. */
  nextIndex(): number {
    return this.index + 1;
  }

  get currentIndex(): number {
    return this.index;
  }

  // ---- roles ----

  roleById(id: string): RoleRecord | undefined {
    return this.roles.get(id);
  }

  roleByName(name: string, namespace: string): RoleRecord | undefined {
    return this.roles.byName(namespace, name.toLowerCase());
  }

  /** Sorted by ID, the order the real registry's ID index yields. */
  listRoles(namespace: string, policyId?: string): RoleRecord[] {
    return sortById(
      [...this.roles.values()].filter(
        (r) =>
          (namespace === ALL_NAMESPACES || r.Namespace === namespace) &&
          (policyId === undefined || r.PolicyIDs.includes(policyId)),
      ),
    );
  }

  /** Stores a role at `role.ModifyIndex`, which must be `nextIndex()`. */
  putRole(role: RoleRecord): void {
    this.putRecord(this.roles, this.roleTableIndex, role);
  }

  deleteRole(id: string): boolean {
    const role = this.roles.get(id);
    if (!role) return false;
    const index = this.nextIndex();
    this.commit(index);
    this.roles.delete(id);
    this.roleTableIndex.set(role.Namespace, index);
    this.changed();
    return true;
  }

  rolesIndex(namespace: string): number {
    return tableIndex(this.roleTableIndex, namespace);
  }

  // ---- policies ----

  policyById(id: string): PolicyRecord | undefined {
    return this.policies.get(id);
  }

  policyByName(name: string, namespace: string): PolicyRecord | undefined {
    return this.policies.byName(namespace, name);
  }

  listPolicies(namespace: string): PolicyRecord[] {
    return sortById(
      [...this.policies.values()].filter((p) => namespace === ALL_NAMESPACES || p.Namespace === namespace),
    );
  }

  putPolicy(policy: PolicyRecord): void {
    this.putRecord(this.policies, this.policyTableIndex, policy);
  }

  policiesIndex(namespace: string): number {
    return tableIndex(this.policyTableIndex, namespace);
  }

  /**
   * Namespaced policies (as in the real registry's enterprise edition): a role links policies of its
   * own namespace or of `default`; by name, its own namespace is searched first.
   */
  policyVisibleFrom(policy: PolicyRecord, namespace: string): boolean {
    return policy.Namespace === namespace || policy.Namespace === DEFAULT_NAMESPACE;
  }

  /**
   * One write: the store's index moves to the record's `ModifyIndex`, and so does its table's index in
   * the record's namespace (what blocking reads of that table wait on).
   */
  private putRecord<T extends { ID: string; Namespace: string; ModifyIndex: number }>(
    records: KeyedRecords<T>,
    tableIndexes: Map<string, number>,
    record: T,
  ): void {
    this.commit(record.ModifyIndex);
    records.set(record);
    tableIndexes.set(record.Namespace, record.ModifyIndex);
    this.changed();
  }

  // ---- persistence ----

  snapshot(): RegistrySnapshot {
    return {
      index: this.index,
      roles: sortById([...this.roles.values()]),
      policies: sortById([...this.policies.values()]),
      tableIndexes: {
        roles: Object.fromEntries(this.roleTableIndex),
        policies: Object.fromEntries(this.policyTableIndex),
      },
    };
  }

  restore(snapshot: RegistrySnapshot): void {
    this.index = snapshot.index;
    for (const role of snapshot.roles) this.roles.set(role);
    for (const policy of snapshot.policies) this.policies.set(policy);
    for (const [ns, idx] of Object.entries(snapshot.tableIndexes.roles)) this.roleTableIndex.set(ns, idx);
    for (const [ns, idx] of Object.entries(snapshot.tableIndexes.policies))
      this.policyTableIndex.set(ns, idx);
  }

  private commit(index: number): void {
    if (index !== this.index + 1)
      throw new Error(`registry index out of order: ${index} after ${this.index}`);
    this.index = index;
  }

  private changed(): void {
    this.onChange();
    this.changes.notify();
  }
}

function tableIndex(indexes: Map<string, number>, namespace: string): number {
  if (namespace !== ALL_NAMESPACES) return indexes.get(namespace) ?? 0;
  let max = 0;
  for (const idx of indexes.values()) max = Math.max(max, idx);
  return max;
}

function sortById<T extends { ID: string }>(items: T[]): T[] {
  return items.sort((a, b) => (a.ID < b.ID ? -1 : a.ID > b.ID ? 1 : 0));
}

/** Checks the shape of a loaded state file before trusting it. */
export function isRegistrySnapshot(value: unknown): value is RegistrySnapshot {
  return (
    hasFields(value, { index: 'integer', roles: 'array', policies: 'array', tableIndexes: 'object' }) &&
    hasFields(value.tableIndexes, { roles: 'object?', policies: 'object?' })
  );
}
