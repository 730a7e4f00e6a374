/**
 * `Hash` of roles and policies: base64 of BLAKE2b-256 over the user-set fields, written in the same
 * order as the real registry's `SetHash`, so a role in the default namespace hashes exactly as there.
 *
 * BLAKE2b comes from `@noble/hashes` (audited): node:crypto offers only the fixed 512-bit variant,
 * and BLAKE2b-256 is not a truncation of it (the digest length is part of the parameter block).
 */
import { blake2b } from '@noble/hashes/blake2.js';
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

/** BLAKE2b-256 over the concatenation of `parts` (what Go's `hash.Write` calls amount to). */
function blake2b256(parts: readonly string[]): Uint8Array {
  return blake2b(Buffer.from(parts.join(''), 'utf8'), { dkLen: 32 });
}
