/**
 * Creating and replacing roles with the real registry's checks, in its order (Consul's `ACL.RoleSet`):
 * name present and valid; on create a unique name, on update a valid UUID, an existing role and no
 * rename onto a taken name; policy links resolved by name and deduplicated by ID; identities checked
 * and deduplicated; then the "raft apply", which rejects unknown policy IDs. Failures here are plain
 * errors, which the real registry answers with HTTP 500 and the message as a text body.
 */
import { randomUUID } from 'node:crypto';
import { roleHash } from './hash.js';
import {
  goQuote,
  isUuid,
  type NodeIdentity,
  RegistryError,
  type RoleRecord,
  type ServiceIdentity,
} from './model.js';
import type { RegistryStore } from './store.js';

/** A role as a request (or a config seed) describes it; missing fields are empty, as after Go decoding. */
export interface RoleInput {
  ID: string;
  Name: string;
  Description: string;
  Policies: { ID: string; Name: string }[];
  ServiceIdentities: ServiceIdentity[];
  NodeIdentities: NodeIdentity[];
}

const VALID_ROLE_NAME = /^[A-Za-z0-9\-_]{1,256}$/;
const VALID_IDENTITY_NAME = /^[a-z0-9]([a-z0-9\-_]*[a-z0-9])?$/;
const IDENTITY_NAME_MAX = 256;

function fail(message: string): never {
  throw new RegistryError(500, message);
}

export function isValidIdentityName(name: string): boolean {
  return name.length >= 1 && name.length <= IDENTITY_NAME_MAX && VALID_IDENTITY_NAME.test(name);
}

export interface UpsertOptions {
  /** Config seeds may fix a new role's ID; through the API an unknown ID is "cannot find role". */
  allowChosenId?: boolean;
}

/** Validates and stores the role in `namespace`; returns the stored record. Throws RegistryError. */
export function upsertRole(
  store: RegistryStore,
  input: RoleInput,
  namespace: string,
  opts: UpsertOptions = {},
): RoleRecord {
  if (input.Name === '') fail('Invalid Role: no Name is set');
  if (!VALID_ROLE_NAME.test(input.Name)) {
    fail("Invalid Role: invalid Name. Only alphanumeric characters, '-' and '_' are allowed");
  }

  let existing: RoleRecord | undefined;
  let id = input.ID;
  const isNew = id === '' || (opts.allowChosenId === true && isUuid(id) && !store.roleById(id));
  if (isNew) {
    if (id === '') id = randomUUID();
    if (store.roleByName(input.Name, namespace))
      fail(`Invalid Role: A Role with Name ${goQuote(input.Name)} already exists`);
  } else {
    if (!isUuid(id)) fail('Role ID invalid UUID');
    existing = store.roleById(id);
    // UNCONFIRMED: the real lookup by ID ignores the namespace; here a role is only found from its own
    // namespace (as reads by ID are namespace-scoped), so an update cannot move a role between namespaces.
    if (!existing || existing.Namespace !== namespace) fail(`cannot find role ${id}`);
    if (existing.Name !== input.Name && store.roleByName(input.Name, namespace)) {
      fail(`Invalid Role: A role with name ${goQuote(input.Name)} already exists`);
    }
  }

  const policyIds = resolvePolicyLinks(store, input.Policies, namespace);
  const serviceIdentities = checkServiceIdentities(input.ServiceIdentities);
  const nodeIdentities = checkNodeIdentities(input.NodeIdentities);

  // What the real registry's state store checks when applying the write.
  for (const policyId of policyIds) {
    const policy = store.policyById(policyId);
    if (!policy || !store.policyVisibleFrom(policy, namespace)) {
      fail(`Failed to apply role upsert request: No such policy with ID: ${policyId}`);
    }
  }

  const index = store.nextIndex();
  const fields = {
    Name: input.Name,
    Description: input.Description,
    PolicyIDs: policyIds,
    ServiceIdentities: serviceIdentities,
    NodeIdentities: nodeIdentities,
    Namespace: namespace,
  };
  const role: RoleRecord = {
    ID: id,
    ...fields,
    Hash: roleHash(fields),
    CreateIndex: existing?.CreateIndex ?? index,
    ModifyIndex: index,
  };
  store.putRole(role);
  return role;
}

/** Links by name become links by ID (the link's ID wins when both are given); duplicates dropped, order kept. */
function resolvePolicyLinks(store: RegistryStore, links: RoleInput['Policies'], namespace: string): string[] {
  const ids: string[] = [];
  for (const link of links) {
    let id = link.ID;
    if (id === '') {
      const policy = store.policyByName(link.Name, namespace) ?? store.policyByName(link.Name, 'default');
      if (!policy) fail(`No such ACL policy with name ${goQuote(link.Name)}`);
      id = policy.ID;
    }
    if (!ids.includes(id)) ids.push(id);
  }
  return ids;
}

function checkServiceIdentities(identities: ServiceIdentity[]): ServiceIdentity[] {
  for (const s of identities) {
    if (s.ServiceName === '') fail('Service identity is missing the service name field on this role');
    if (!isValidIdentityName(s.ServiceName)) {
      fail(
        `Service identity ${goQuote(s.ServiceName)} has an invalid name. Only alphanumeric characters, '-' and '_' are allowed`,
      );
    }
  }
  return dedupeServiceIdentities(identities);
}

function checkNodeIdentities(identities: NodeIdentity[]): NodeIdentity[] {
  for (const n of identities) {
    if (n.NodeName === '') fail('Node identity is missing the node name field on this role');
    if (n.Datacenter === '') fail('Node identity is missing the datacenter field on this role');
    if (!isValidIdentityName(n.NodeName)) {
      fail("Node identity has an invalid name. Only alphanumeric characters, '-' and '_' are allowed");
    }
  }
  return dedupeNodeIdentities(identities);
}

/**
 * As the real registry: with more than one identity they are sorted by name and merged per name; the
 * merge widens scope (an identity without datacenters means all of them), else unions the datacenters.
 */
function dedupeServiceIdentities(identities: ServiceIdentity[]): ServiceIdentity[] {
  const copies = identities.map((s) => ({ ServiceName: s.ServiceName, Datacenters: [...s.Datacenters] }));
  if (copies.length <= 1) return copies;
  copies.sort((a, b) => compare(a.ServiceName, b.ServiceName));
  const out: ServiceIdentity[] = [];
  for (const s of copies) {
    const prev = out[out.length - 1];
    if (prev && prev.ServiceName === s.ServiceName) {
      prev.Datacenters =
        prev.Datacenters.length === 0 || s.Datacenters.length === 0
          ? []
          : [...new Set([...prev.Datacenters, ...s.Datacenters])].sort(compare);
    } else {
      out.push(s);
    }
  }
  return out;
}

/** UNCONFIRMED detail: sorted by node name then datacenter, exact duplicates dropped. */
function dedupeNodeIdentities(identities: NodeIdentity[]): NodeIdentity[] {
  const copies = identities.map((n) => ({ NodeName: n.NodeName, Datacenter: n.Datacenter }));
  if (copies.length <= 1) return copies;
  copies.sort((a, b) => compare(a.NodeName, b.NodeName) || compare(a.Datacenter, b.Datacenter));
  return copies.filter(
    (n, i) => i === 0 || n.NodeName !== copies[i - 1]!.NodeName || n.Datacenter !== copies[i - 1]!.Datacenter,
  );
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
