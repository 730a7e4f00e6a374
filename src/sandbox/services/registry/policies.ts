/**
 * Policies exist in the sandbox so roles can link them: the built-in `global-management` policy (with
 * the real registry's fixed ID) plus the ones the sandbox config lists. There is no API to write
 * policies; the read endpoints let a client check that a policy exists.
 */
import { randomUUID } from 'node:crypto';
import type { PolicySeed } from './config.js';
import { policyHash } from './hash.js';
import { DEFAULT_NAMESPACE, goQuote, isUuid, type PolicyRecord } from './model.js';
import type { RegistryStore } from './store.js';

export const GLOBAL_MANAGEMENT_ID = '00000000-0000-0000-0000-000000000001';
export const GLOBAL_MANAGEMENT_NAME = 'global-management';

const GLOBAL_MANAGEMENT_RULES = `acl = "write"
agent_prefix "" {
  policy = "write"
}
event_prefix "" {
  policy = "write"
}
key_prefix "" {
  policy = "write"
}
keyring = "write"
node_prefix "" {
  policy = "write"
}
operator = "write"
mesh = "write"
peering = "write"
query_prefix "" {
  policy = "write"
}
service_prefix "" {
  policy = "write"
  intentions = "write"
}
session_prefix "" {
  policy = "write"
}`;

const VALID_POLICY_NAME = /^[A-Za-z0-9\-_]{1,128}$/;

export function ensureBuiltinPolicies(store: RegistryStore): void {
  if (store.policyById(GLOBAL_MANAGEMENT_ID)) return;
  const fields = {
    Name: GLOBAL_MANAGEMENT_NAME,
    Description: 'Builtin Policy that grants unlimited access',
    Rules: GLOBAL_MANAGEMENT_RULES,
    Datacenters: [],
  };
  const index = store.nextIndex();
  store.putPolicy({
    ID: GLOBAL_MANAGEMENT_ID,
    ...fields,
    Namespace: DEFAULT_NAMESPACE,
    Hash: policyHash(fields),
    CreateIndex: index,
    ModifyIndex: index,
  });
}

/**
 * Creates or updates the policy a config entry describes. It matches an existing policy by ID when
 * given, else by name in its namespace, and writes only when something differs, so restarting with
 * the same config does not move the index. Throws Error with a message for the config report.
 */
export function applyPolicySeed(store: RegistryStore, seed: PolicySeed): PolicyRecord {
  const namespace = seed.Namespace ?? DEFAULT_NAMESPACE;
  if (!VALID_POLICY_NAME.test(seed.Name)) {
    throw new Error("invalid Name. Only alphanumeric characters, '-' and '_' are allowed (at most 128)");
  }
  if (seed.ID !== undefined && !isUuid(seed.ID)) throw new Error(`ID ${goQuote(seed.ID)} is not a UUID`);
  if (
    seed.ID === GLOBAL_MANAGEMENT_ID ||
    (seed.Name === GLOBAL_MANAGEMENT_NAME && namespace === DEFAULT_NAMESPACE)
  ) {
    throw new Error(`${GLOBAL_MANAGEMENT_NAME} is built in and cannot be redefined`);
  }

  const existing =
    seed.ID !== undefined ? store.policyById(seed.ID) : store.policyByName(seed.Name, namespace);
  if (existing && existing.Namespace !== namespace) {
    throw new Error(`policy ${existing.ID} already exists in namespace ${goQuote(existing.Namespace)}`);
  }
  const sameName = store.policyByName(seed.Name, namespace);
  if (sameName && sameName.ID !== existing?.ID) {
    throw new Error(
      `A Policy with Name ${goQuote(seed.Name)} already exists in namespace ${goQuote(namespace)}`,
    );
  }

  const fields = {
    Name: seed.Name,
    Description: seed.Description ?? '',
    Rules: seed.Rules ?? '',
    Datacenters: [...(seed.Datacenters ?? [])],
  };
  const hash = policyHash(fields);
  if (existing && existing.Hash === hash) return existing;

  const index = store.nextIndex();
  const policy: PolicyRecord = {
    ID: existing?.ID ?? seed.ID ?? randomUUID(),
    ...fields,
    Namespace: namespace,
    Hash: hash,
    CreateIndex: existing?.CreateIndex ?? index,
    ModifyIndex: index,
  };
  store.putPolicy(policy);
  return policy;
}
