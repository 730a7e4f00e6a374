/**
 * `Hash` of roles and policies: base64 of BLAKE2b-256 over the user-set fields, written in the same
 * order as the real registry's `SetHash`, so a role in the default namespace hashes exactly as there.
 */
import { blake2b256 } from './blake2b.js';
import { DEFAULT_NAMESPACE, type NodeIdentity, type ServiceIdentity } from './model.js';

export function roleHash(role: {
  Name: string;
  Description: string;
  PolicyIDs: string[];
  ServiceIdentities: ServiceIdentity[];
  NodeIdentities: NodeIdentity[];
  Namespace: string;
}): string {
  const parts = [role.Name, role.Description, ...role.PolicyIDs];
  for (const s of role.ServiceIdentities) parts.push(s.ServiceName, ...s.Datacenters);
  for (const n of role.NodeIdentities) parts.push(n.NodeName, n.Datacenter);
  // UNCONFIRMED: what the enterprise edition adds for the namespace. The namespace is written only
  // when it is not `default`, so default-namespace hashes equal the community edition's.
  if (role.Namespace !== DEFAULT_NAMESPACE) parts.push(role.Namespace);
  return Buffer.from(blake2b256(parts)).toString('base64');
}

export function policyHash(policy: {
  Name: string;
  Description: string;
  Rules: string;
  Datacenters: string[];
}): string {
  return Buffer.from(
    blake2b256([policy.Name, policy.Description, policy.Rules, ...policy.Datacenters]),
  ).toString('base64');
}
