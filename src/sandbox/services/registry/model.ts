/**
 * The registry's stored records and their JSON as the real registry renders it (Consul's
 * `structs.ACLRole` / `ACLPolicy`): `Policies`, `ServiceIdentities`, `NodeIdentities` and a policy's
 * `Datacenters` are omitted when empty (Go `omitempty`); `Description` is always present.
 */

export const DEFAULT_NAMESPACE = 'default';
/** `?ns=*` on reads: every namespace. */
export const ALL_NAMESPACES = '*';

export interface ServiceIdentity {
  ServiceName: string;
  Datacenters: string[];
}

export interface NodeIdentity {
  NodeName: string;
  Datacenter: string;
}

export interface RoleRecord {
  ID: string;
  Name: string;
  Description: string;
  Namespace: string;
  /** Links are stored by policy ID only, so renaming a policy never breaks a role (names filled in on read). */
  PolicyIDs: string[];
  ServiceIdentities: ServiceIdentity[];
  NodeIdentities: NodeIdentity[];
  Hash: string;
  CreateIndex: number;
  ModifyIndex: number;
}

export interface PolicyRecord {
  ID: string;
  Name: string;
  Description: string;
  Rules: string;
  Datacenters: string[];
  Namespace: string;
  Hash: string;
  CreateIndex: number;
  ModifyIndex: number;
}

export interface RoleJson {
  ID: string;
  Name: string;
  Description: string;
  Policies?: { ID: string; Name: string }[];
  ServiceIdentities?: { ServiceName: string; Datacenters?: string[] }[];
  NodeIdentities?: NodeIdentity[];
  Hash: string;
  CreateIndex: number;
  ModifyIndex: number;
  Namespace: string;
}

/** Key order follows the real struct: identity fields, links, Hash, raft indexes, then the namespace. */
export function roleToJson(role: RoleRecord, policyName: (id: string) => string | undefined): RoleJson {
  const json: Partial<RoleJson> = { ID: role.ID, Name: role.Name, Description: role.Description };
  // A link whose policy is gone is dropped on read, as the real registry's fix-up of stale links does.
  const policies = role.PolicyIDs.flatMap((id) => {
    const name = policyName(id);
    return name === undefined ? [] : [{ ID: id, Name: name }];
  });
  if (policies.length > 0) json.Policies = policies;
  if (role.ServiceIdentities.length > 0) {
    json.ServiceIdentities = role.ServiceIdentities.map((s) =>
      s.Datacenters.length > 0
        ? { ServiceName: s.ServiceName, Datacenters: [...s.Datacenters] }
        : { ServiceName: s.ServiceName },
    );
  }
  if (role.NodeIdentities.length > 0) json.NodeIdentities = role.NodeIdentities.map((n) => ({ ...n }));
  json.Hash = role.Hash;
  json.CreateIndex = role.CreateIndex;
  json.ModifyIndex = role.ModifyIndex;
  json.Namespace = role.Namespace;
  return json as RoleJson;
}

export function policyToJson(policy: PolicyRecord, opts: { stub?: boolean } = {}): Record<string, unknown> {
  const json: Record<string, unknown> = { ID: policy.ID, Name: policy.Name, Description: policy.Description };
  // The list endpoint returns stubs without Rules, as the real one does.
  if (!opts.stub) json.Rules = policy.Rules;
  if (policy.Datacenters.length > 0) json.Datacenters = [...policy.Datacenters];
  json.Hash = policy.Hash;
  json.CreateIndex = policy.CreateIndex;
  json.ModifyIndex = policy.ModifyIndex;
  json.Namespace = policy.Namespace;
  return json;
}

/** An error answered as a plain-text body, the registry's error format. */
export class RegistryError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'RegistryError';
  }
}

/** Go's `%q` for the names that appear in error texts (close enough: JSON escaping). */
export function goQuote(text: string): string {
  return JSON.stringify(text);
}

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** hashicorp/go-uuid's ParseUUID: 36 characters, hex groups 8-4-4-4-12. */
export function isUuid(text: string): boolean {
  return UUID.test(text);
}
